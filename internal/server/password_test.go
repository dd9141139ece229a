package server

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// Login, password change and logout as `skiff login`, `account
// update-password` and `logout` send them (the CLI's side is tested in
// cmd/skiff): the old session and the old password stop working after the
// change, a new login works, and a logged-out token is refused.
func TestLoginUpdatePasswordAndLogout(t *testing.T) {
	h := startServer(t)
	h.addUser("alice", "alice-password")

	r := h.do(http.MethodPost, "/api/v1/session", "", map[string]string{"username": "alice", "password": "wrong-password"})
	if r.status != http.StatusUnauthorized || !strings.Contains(string(r.body), "Invalid username or password") {
		t.Fatalf("login with a wrong password: %d %s", r.status, r.body)
	}
	old := h.login("alice", "alice-password")
	if r := h.do(http.MethodGet, "/api/v1/session/userinfo", old, nil); r.status != http.StatusOK || !strings.Contains(string(r.body), `"username":"alice"`) {
		t.Fatalf("userinfo: %d %s", r.status, r.body)
	}
	// The session must be older than the change, to the second.
	h.clock.Add(2 * time.Second)

	update := func(current, next string) response {
		return h.do(http.MethodPut, "/api/v1/account/password", old, map[string]string{"currentPassword": current, "newPassword": next})
	}
	if r := update("not-it", "new-alice-password"); r.status == http.StatusOK || !strings.Contains(string(r.body), "current password does not match") {
		t.Fatalf("update with a wrong current password: %d %s", r.status, r.body)
	}
	if r := update("alice-password", "short"); r.status == http.StatusOK || !strings.Contains(string(r.body), "8 to 72 characters") {
		t.Fatalf("update to a short password: %d %s", r.status, r.body)
	}
	if r := update("alice-password", "new-alice-password"); r.status != http.StatusOK {
		t.Fatalf("update: %d %s", r.status, r.body)
	}
	wantError(t, h.do(http.MethodGet, "/api/v1/applications", old, nil), http.StatusUnauthorized)
	wantError(t, h.do(http.MethodPost, "/api/v1/session", "", map[string]string{"username": "alice", "password": "alice-password"}), http.StatusUnauthorized)
	token := h.login("alice", "new-alice-password")
	wantError(t, h.do(http.MethodPut, "/api/v1/account/password", token,
		map[string]string{"name": "admin", "currentPassword": "x", "newPassword": "whatever-long"}), http.StatusForbidden)

	if r := h.do(http.MethodDelete, "/api/v1/session", token, nil); r.status != http.StatusOK {
		t.Fatalf("logout: %d %s", r.status, r.body)
	}
	wantError(t, h.do(http.MethodGet, "/api/v1/session/userinfo", token, nil), http.StatusUnauthorized)
}

func TestIssuedBefore(t *testing.T) {
	change := time.Date(2026, 1, 1, 12, 0, 0, 700_000_000, time.UTC)
	second := change.Truncate(time.Second)
	claims := func(iat time.Time, nano int64) *sessionClaims {
		c := &sessionClaims{IssuedNano: nano}
		if !iat.IsZero() {
			c.IssuedAt = jwt.NewNumericDate(iat)
		}
		return c
	}
	tests := map[string]struct {
		claims *sessionClaims
		want   bool
	}{
		"issued earlier in the second of the change":                          {claims: claims(second, second.Add(300*time.Millisecond).UnixNano()), want: true},
		"issued later in the second of the change":                            {claims: claims(second, second.Add(900*time.Millisecond).UnixNano())},
		"issued at the change itself":                                         {claims: claims(second, change.UnixNano())},
		"issued a second before":                                              {claims: claims(second.Add(-time.Second), second.Add(-time.Second).UnixNano()), want: true},
		"an older token with whole seconds only, in the second of the change": {claims: claims(second, 0), want: true},
		"an older token with whole seconds only, after the change":            {claims: claims(second.Add(time.Second), 0)},
		"a token without any issue time":                                      {claims: claims(time.Time{}, 0), want: true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := tc.claims.issuedBefore(change); got != tc.want {
				t.Errorf("issuedBefore = %v, want %v", got, tc.want)
			}
		})
	}
}

// A session issued in the same second as a password change, but before
// it, ends with the change; the login right after it (the CLI's) works.
func TestPasswordChangeEndsSessionsOfTheSameSecond(t *testing.T) {
	h := startServer(t)
	h.addUser("alice", "alice-password")
	h.clock.mu.Lock()
	h.clock.now = time.Now().Truncate(time.Second).Add(100 * time.Millisecond)
	h.clock.mu.Unlock()
	before := h.login("alice", "alice-password")
	h.clock.Add(300 * time.Millisecond) // still the same second

	r := h.do(http.MethodPut, "/api/v1/account/password", before,
		map[string]string{"currentPassword": "alice-password", "newPassword": "new-alice-password"})
	if r.status != http.StatusOK {
		t.Fatalf("update-password: %d %s", r.status, r.body)
	}
	after := h.login("alice", "new-alice-password")
	r = h.do(http.MethodGet, "/api/v1/session/userinfo", before, nil)
	wantError(t, r, http.StatusUnauthorized)
	if r := h.do(http.MethodGet, "/api/v1/session/userinfo", after, nil); r.status != http.StatusOK {
		t.Fatalf("the login after the change: %d %s", r.status, r.body)
	}
}
