package server

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

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
