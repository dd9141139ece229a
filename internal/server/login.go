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
	st, err := s.loadSettings(r.Context())
	if err != nil {
		s.internalError(w, err)
		return
	}
	limits := s.loginLimits(st, req.Username, clientIP(r))
	for _, l := range limits {
		if wait, blocked := l.limiter.Blocked(l.key); blocked {
			w.Header().Set("Retry-After", strconv.Itoa(int((wait+time.Second-1)/time.Second)))
			writeError(w, http.StatusTooManyRequests, "too many failed logins: try again later")
			return
		}
	}
	acc, ok := st.accounts[req.Username]
	hash := []byte(acc.PasswordHash)
	usable := ok && acc.Enabled && acc.can(capLogin) && len(hash) > 0
	if !usable {
		hash = dummyHash()
	}
	if bcrypt.CompareHashAndPassword(hash, []byte(req.Password)) != nil || !usable {
		for _, l := range limits {
			l.limiter.Fail(l.key)
		}
		writeError(w, http.StatusUnauthorized, "Invalid username or password")
		return
	}
	limits[0].limiter.Reset(limits[0].key)
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

// loginLimit is a limiter of failed logins and the key a login counts under.
type loginLimit struct {
	limiter *failureLimiter
	key     string
}

// loginLimits are the limits a login of user from address ip counts
// towards: the user name's, then the address's. Local accounts' failures
// are kept apart from unknown names': their table is bounded by the
// configuration, so a flood of failures with made-up names, which fills
// the other, cannot push out admin's count.
func (s *Server) loginLimits(st *settings, user, ip string) [2]loginLimit {
	users := s.unknownUserLimiter
	if _, ok := st.accounts[user]; ok {
		users = s.userLimiter
	}
	return [2]loginLimit{{users, "user:" + user}, {s.ipLimiter, "ip:" + ip}}
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
