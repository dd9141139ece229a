package server

import (
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	"golang.org/x/crypto/bcrypt"
)

// loginRequest is the body of POST /api/v1/session (Argo CD's SessionCreateRequest).
type loginRequest struct {
	Username string `json:"username"`
	Password string `json:"password"`
}

// dummyHash keeps the time of a login for an unknown user like a known one's.
var dummyHash = sync.OnceValue(func() []byte {
	hash, _ := bcrypt.GenerateFromPassword([]byte("skiff-dummy-password"), bcrypt.DefaultCost)
	return hash
})

// handleLogin checks a local user's password and returns a session token
// in the body and in the cookie. Failures are limited per user and per
// client address.
func (s *Server) handleLogin(w http.ResponseWriter, r *http.Request) {
	var req loginRequest
	if !decodeJSON(w, r, 64<<10, &req) {
		return
	}
	if req.Username == "" || req.Password == "" {
		writeError(w, http.StatusBadRequest, "username and password are required")
		return
	}
	if len(req.Username) > 256 || len(req.Password) > 1024 {
		writeError(w, http.StatusBadRequest, "username or password too long")
		return
	}
	userKey, ipKey := "user:"+req.Username, "ip:"+clientIP(r)
	for _, l := range []struct {
		limiter *failureLimiter
		key     string
	}{{s.userLimiter, userKey}, {s.ipLimiter, ipKey}} {
		if wait, blocked := l.limiter.Blocked(l.key); blocked {
			w.Header().Set("Retry-After", strconv.Itoa(int((wait+time.Second-1)/time.Second)))
			writeError(w, http.StatusTooManyRequests, "too many failed logins: try again later")
			return
		}
	}
	st, err := s.loadSettings(r.Context())
	if err != nil {
		s.internalError(w, err)
		return
	}
	acc, ok := st.accounts[req.Username]
	hash := []byte(acc.PasswordHash)
	usable := ok && acc.Enabled && acc.can(capLogin) && len(hash) > 0
	if !usable {
		hash = dummyHash()
	}
	if bcrypt.CompareHashAndPassword(hash, []byte(req.Password)) != nil || !usable {
		s.userLimiter.Fail(userKey)
		s.ipLimiter.Fail(ipKey)
		writeError(w, http.StatusUnauthorized, "Invalid username or password")
		return
	}
	s.userLimiter.Reset(userKey)
	token, exp, err := s.sessions.issue(st.signKey, acc.Name)
	if err != nil {
		s.internalError(w, err)
		return
	}
	http.SetCookie(w, sessionCookie(token, exp, r.TLS != nil))
	writeJSON(w, http.StatusOK, map[string]string{"token": token})
}

// handleLogout revokes the caller's token, here at once and for every
// replica through the revocation Secret, and clears the cookie.
func (s *Server) handleLogout(w http.ResponseWriter, r *http.Request, c *session) {
	s.sessions.revoke(c.claims)
	if err := s.storeRevoked(r.Context(), c.claims); err != nil {
		s.internalError(w, err)
		return
	}
	http.SetCookie(w, sessionCookie("", time.Time{}, r.TLS != nil))
	writeJSON(w, http.StatusOK, map[string]string{})
}

// userInfo is Argo CD's GetUserInfoResponse.
type userInfo struct {
	LoggedIn bool     `json:"loggedIn"`
	Username string   `json:"username"`
	Iss      string   `json:"iss"`
	Groups   []string `json:"groups"`
}

// handleUserInfo names the caller; an SSO user's issuer is the provider's
// and its groups are the ID token's.
func (s *Server) handleUserInfo(w http.ResponseWriter, _ *http.Request, c *session) {
	info := userInfo{LoggedIn: true, Username: c.displayName(), Iss: issuer, Groups: []string{}}
	if sso := c.claims.SSO; sso != nil {
		info.Iss = sso.Issuer
		info.Groups = append(info.Groups, sso.Groups...)
	}
	writeJSON(w, http.StatusOK, info)
}

// clientIP is the address the connection comes from. Forwarded headers are
// not trusted: anyone could set them to dodge the per-address limit.
func clientIP(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}
