package server

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

const (
	// CookieName is the session cookie Argo CD's UI uses.
	CookieName = "argocd.token"
	issuer     = "argocd"
	// defaultSessionDuration is Argo CD's users.session.duration default.
	defaultSessionDuration = 24 * time.Hour
)

// sessionClaims are the claims of a session token: a local user's, or
// with SSO set a user's who logged in through the OIDC provider.
type sessionClaims struct {
	jwt.RegisteredClaims
	// IssuedNano is the issue time in Unix nanoseconds: iat has whole
	// seconds only, and a password change in the same second as a login
	// must still end that session.
	IssuedNano int64      `json:"iat_ns,omitempty"`
	SSO        *ssoClaims `json:"sso,omitempty"`
}

// issuedBefore reports whether the token was issued before t (a password
// change): to the nanosecond when it says so, else to its iat's second.
func (c *sessionClaims) issuedBefore(t time.Time) bool {
	switch {
	case c.IssuedNano != 0:
		return time.Unix(0, c.IssuedNano).Before(t)
	case c.IssuedAt != nil:
		return c.IssuedAt.Before(t)
	}
	return true
}

// ssoClaims are what an SSO session keeps of the ID token; the session's
// subject is UserID.
type ssoClaims struct {
	Issuer  string `json:"iss"`
	Subject string `json:"sub"`
	// UserID is Dex's federated user ID, else Subject, as Argo CD names an
	// SSO user in RBAC; sessions of older versions, named by their email,
	// have none.
	UserID        string   `json:"uid,omitempty"`
	Email         string   `json:"email,omitempty"`
	EmailVerified bool     `json:"email_verified,omitempty"`
	Groups        []string `json:"groups,omitempty"`
}

// displayName is how an SSO user shows in audit fields and the UI: the
// email when the provider verified it, else the user ID.
func (c *ssoClaims) displayName() string {
	if c.Email != "" && c.EmailVerified {
		return c.Email
	}
	return c.UserID
}

// sessions issues and checks signed session tokens and remembers the ones
// logged out here until they expire (the Secret of revocation.go keeps
// them for every replica and the next start).
type sessions struct {
	now      func() time.Time
	duration time.Duration

	mu      sync.Mutex
	revoked map[string]time.Time // token ID → expiry
}

func newSessions(now func() time.Time, duration time.Duration) *sessions {
	if duration <= 0 {
		duration = defaultSessionDuration
	}
	return &sessions{now: now, duration: duration, revoked: map[string]time.Time{}}
}

// issue signs a token for local user with key (HS256).
func (s *sessions) issue(key []byte, user string) (string, time.Time, error) {
	return s.issueClaims(key, sessionClaims{}, user)
}

// issueClaims signs claims, their registered part set here, for user.
func (s *sessions) issueClaims(key []byte, claims sessionClaims, user string) (string, time.Time, error) {
	id := make([]byte, 16)
	if _, err := rand.Read(id); err != nil {
		return "", time.Time{}, err
	}
	issued := s.now()
	now := issued.Truncate(time.Second)
	exp := now.Add(s.duration)
	claims.RegisteredClaims = jwt.RegisteredClaims{
		Issuer:    issuer,
		Subject:   user,
		ID:        hex.EncodeToString(id),
		IssuedAt:  jwt.NewNumericDate(now),
		NotBefore: jwt.NewNumericDate(now),
		ExpiresAt: jwt.NewNumericDate(exp),
	}
	claims.IssuedNano = issued.UnixNano()
	token, err := jwt.NewWithClaims(jwt.SigningMethodHS256, claims).SignedString(key)
	return token, exp, err
}

var errRevoked = errors.New("session has been logged out")

// verify checks signature, issuer, times and revocation, and returns the claims.
func (s *sessions) verify(key []byte, token string) (*sessionClaims, error) {
	claims := &sessionClaims{}
	_, err := jwt.ParseWithClaims(token, claims, func(*jwt.Token) (any, error) { return key, nil },
		jwt.WithValidMethods([]string{jwt.SigningMethodHS256.Alg()}),
		jwt.WithIssuer(issuer),
		jwt.WithExpirationRequired(),
		jwt.WithTimeFunc(s.now))
	if err != nil {
		return nil, err
	}
	if claims.Subject == "" || claims.ID == "" {
		return nil, errors.New("token has no subject or ID")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.revoked[claims.ID]; ok {
		return nil, errRevoked
	}
	return claims, nil
}

// revoke remembers a token ID until its expiry and forgets expired ones.
func (s *sessions) revoke(claims *sessionClaims) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	for id, exp := range s.revoked {
		if now.After(exp) {
			delete(s.revoked, id)
		}
	}
	if claims.ExpiresAt != nil {
		s.revoked[claims.ID] = claims.ExpiresAt.Time
	}
}

// tokenFrom finds the session token of a request: a bearer Authorization
// header (the CLI) or the argocd.token cookie (the UI).
func tokenFrom(r *http.Request) string {
	if h := r.Header.Get("Authorization"); h != "" {
		if scheme, token, ok := strings.Cut(h, " "); ok && strings.EqualFold(scheme, "Bearer") {
			return strings.TrimSpace(token)
		}
	}
	if c, err := r.Cookie(CookieName); err == nil {
		return c.Value
	}
	return ""
}

// sessionCookie is the UI's session cookie; an empty token clears it.
func sessionCookie(token string, expires time.Time, secure bool) *http.Cookie {
	c := &http.Cookie{
		Name:     CookieName,
		Value:    token,
		Path:     "/",
		HttpOnly: true,
		Secure:   secure,
		SameSite: http.SameSiteLaxMode,
		Expires:  expires,
	}
	if token == "" {
		c.MaxAge = -1
		c.Expires = time.Unix(0, 0)
	}
	return c
}

// randomPassword returns n characters of letters and digits, like Argo CD's
// generated admin password.
func randomPassword(n int) (string, error) {
	const alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	buf := make([]byte, n)
	if _, err := rand.Read(buf); err != nil {
		return "", fmt.Errorf("generating a password: %w", err)
	}
	for i := range buf {
		buf[i] = alphabet[int(buf[i])%len(alphabet)] // 256 % 62 bias is negligible here
	}
	return string(buf), nil
}
