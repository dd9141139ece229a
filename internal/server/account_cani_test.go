package server

import (
	"net/http"
	"testing"
)

// can-i answers for the caller's own roles, as Argo CD's does.
func TestCanI(t *testing.T) {
	h := startServer(t)
	h.addUser("alice", "alice-password")
	h.setRBAC(map[string]string{"policy.csv": "g, alice, role:readonly\n"})
	alice := h.login("alice", "alice-password")
	admin := h.login("admin", h.password)
	for _, tc := range []struct {
		token, path, want string
	}{
		{alice, "applications/get/default/guestbook", "yes"},
		{alice, "applications/sync/default/guestbook", "no"},
		{alice, "applications/delete/default/guestbook", "no"},
		{admin, "applications/sync/default/guestbook", "yes"},
	} {
		r := h.do(http.MethodGet, "/api/v1/account/can-i/"+tc.path, tc.token, nil)
		if r.status != http.StatusOK {
			t.Fatalf("%s: %d %s", tc.path, r.status, r.body)
		}
		var out struct {
			Value string `json:"value"`
		}
		r.json(t, &out)
		if out.Value != tc.want {
			t.Errorf("can-i %s = %q, want %q", tc.path, out.Value, tc.want)
		}
	}
	if r := h.do(http.MethodGet, "/api/v1/account/can-i/applications/sync/default/guestbook", "", nil); r.status != http.StatusUnauthorized {
		t.Errorf("without a session: %d, want 401", r.status)
	}
}
