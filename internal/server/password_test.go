package server

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/skiffcd/skiff/internal/cli/sessioncli"
)

// `skiff login`, `account update-password` and `logout` against the real
// server: the CLI's client logs in, changes its password (the old session
// and the old password stop working, the client is logged in again with the
// new one), and logs out (its token is refused after).
func TestLoginUpdatePasswordAndLogoutFromTheCLI(t *testing.T) {
	h := startServer(t)
	h.addUser("alice", "alice-password")
	ctx := context.Background()
	cfg := &sessioncli.Config{Server: strings.TrimPrefix(h.url, "https://"), Insecure: true}
	cli := sessioncli.NewClient(cfg)

	if err := cli.Login(ctx, "alice", "wrong-password"); err == nil || !strings.Contains(err.Error(), "Invalid username or password (401)") {
		t.Fatalf("login with a wrong password: %v", err)
	}
	if err := cli.Login(ctx, "alice", "alice-password"); err != nil {
		t.Fatal(err)
	}
	old := cfg.Token
	if user, err := cli.UserInfo(ctx); err != nil || user != "alice" {
		t.Fatalf("userinfo: %q %v", user, err)
	}
	// The session must be older than the change, to the second.
	h.clock.Add(2 * time.Second)

	if err := cli.UpdatePassword(ctx, "not-it", "new-alice-password"); err == nil || !strings.Contains(err.Error(), "current password does not match") {
		t.Fatalf("update with a wrong current password: %v", err)
	}
	if err := cli.UpdatePassword(ctx, "alice-password", "short"); err == nil || !strings.Contains(err.Error(), "8 to 72 characters") {
		t.Fatalf("update to a short password: %v", err)
	}
	if err := cli.UpdatePassword(ctx, "alice-password", "new-alice-password"); err != nil {
		t.Fatal(err)
	}
	if cfg.Token == "" || cfg.Token == old {
		t.Fatal("the client was not logged in again after the change")
	}
	wantError(t, h.do(http.MethodGet, "/api/v1/applications", old, nil), http.StatusUnauthorized)
	wantError(t, h.do(http.MethodPost, "/api/v1/session", "", map[string]string{"username": "alice", "password": "alice-password"}), http.StatusUnauthorized)
	if r := h.do(http.MethodGet, "/api/v1/session/userinfo", cfg.Token, nil); r.status != http.StatusOK {
		t.Fatalf("the new session: %d %s", r.status, r.body)
	}
	wantError(t, h.do(http.MethodPut, "/api/v1/account/password", cfg.Token,
		map[string]string{"name": "admin", "currentPassword": "x", "newPassword": "whatever-long"}), http.StatusForbidden)

	token := cfg.Token
	if err := cli.Logout(ctx); err != nil {
		t.Fatal(err)
	}
	if cfg.Token != "" {
		t.Error("the token is kept after logout")
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
