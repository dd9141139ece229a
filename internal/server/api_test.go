package server

import (
	"context"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/skiffcd/skiff/api/v1alpha1"
)

func TestEveryAPICallNeedsASession(t *testing.T) {
	h := startServer(t)
	for _, c := range []struct{ method, path string }{
		{http.MethodGet, "/api/v1/applications"},
		{http.MethodGet, "/api/v1/applications/guestbook"},
		{http.MethodPost, "/api/v1/applications/guestbook/sync"},
		{http.MethodGet, "/api/v1/projects"},
		{http.MethodGet, "/api/v1/session/userinfo"},
		{http.MethodDelete, "/api/v1/session"},
		{http.MethodGet, "/api/v1/no-such-thing"},
	} {
		wantError(t, h.do(c.method, c.path, "", nil), http.StatusUnauthorized)
		wantError(t, h.do(c.method, c.path, "not-a-token", nil), http.StatusUnauthorized)
	}
	if r := h.do(http.MethodGet, "/healthz", "", nil); r.status != http.StatusOK {
		t.Errorf("/healthz: %d %s", r.status, r.body)
	}
}

func TestAdminLoginWithTheGeneratedPassword(t *testing.T) {
	h := startServer(t)

	wantError(t, h.do(http.MethodPost, "/api/v1/session", "", map[string]string{"username": "admin", "password": "wrong"}), http.StatusUnauthorized)
	wantError(t, h.do(http.MethodPost, "/api/v1/session", "", []byte(`{"username":`)), http.StatusBadRequest)

	r := h.do(http.MethodPost, "/api/v1/session", "", map[string]string{"username": "admin", "password": h.password})
	if r.status != http.StatusOK {
		t.Fatalf("login: %d %s", r.status, r.body)
	}
	var out struct {
		Token string `json:"token"`
	}
	r.json(t, &out)
	var cookie *http.Cookie
	for _, c := range (&http.Response{Header: r.header}).Cookies() {
		if c.Name == CookieName {
			cookie = c
		}
	}
	if cookie == nil || cookie.Value != out.Token || !cookie.HttpOnly || !cookie.Secure || cookie.SameSite != http.SameSiteLaxMode {
		t.Fatalf("session cookie %+v, want the token, HttpOnly, Secure (TLS) and SameSite=Lax", cookie)
	}

	var info userInfo
	r = h.do(http.MethodGet, "/api/v1/session/userinfo", out.Token, nil)
	if r.status != http.StatusOK {
		t.Fatalf("userinfo with bearer: %d %s", r.status, r.body)
	}
	r.json(t, &info)
	if !info.LoggedIn || info.Username != "admin" {
		t.Errorf("userinfo %+v", info)
	}
	byCookie := h.do(http.MethodGet, "/api/v1/applications", "", nil, "Cookie", CookieName+"="+out.Token)
	if byCookie.status != http.StatusOK {
		t.Fatalf("list with cookie: %d %s", byCookie.status, byCookie.body)
	}

	// Logging out revokes the token for both ways of sending it.
	r = h.do(http.MethodDelete, "/api/v1/session", out.Token, nil)
	if r.status != http.StatusOK {
		t.Fatalf("logout: %d %s", r.status, r.body)
	}
	if c := (&http.Response{Header: r.header}).Cookies(); len(c) != 1 || c[0].Name != CookieName || c[0].MaxAge >= 0 {
		t.Errorf("logout cookies %+v, want the session cookie cleared", c)
	}
	wantError(t, h.do(http.MethodGet, "/api/v1/session/userinfo", out.Token, nil), http.StatusUnauthorized)
	wantError(t, h.do(http.MethodGet, "/api/v1/applications", "", nil, "Cookie", CookieName+"="+out.Token), http.StatusUnauthorized)

	// A new login works after logout; a password change ends it.
	token := h.login("admin", h.password)
	h.setSecretKey(keyAdminPasswordMtime, h.clock.Now().Add(time.Hour).UTC().Format(time.RFC3339))
	wantError(t, h.do(http.MethodGet, "/api/v1/session/userinfo", token, nil), http.StatusUnauthorized)
}

func TestReadonlyUserCanListButNotSync(t *testing.T) {
	h := startServer(t)
	h.addUser("alice", "alice-password")
	h.setRBAC(map[string]string{"policy.csv": "g, alice, role:readonly\n"})
	src := v1alpha1.ApplicationSource{RepoURL: "https://github.com/org/repo", Path: "guestbook", TargetRevision: "HEAD"}
	h.createApp("guestbook", "default", map[string]string{"team": "a"}, src)
	h.createApp("other", "other", map[string]string{"team": "b"}, src)
	h.createApp("unset", "", map[string]string{"team": "c"}, src) // written without the API: no project means "default"

	alice := h.login("alice", "alice-password")
	admin := h.login("admin", h.password)

	names := func(token, query string) []string {
		t.Helper()
		r := h.do(http.MethodGet, "/api/v1/applications"+query, token, nil)
		if r.status != http.StatusOK {
			t.Fatalf("list%s: %d %s", query, r.status, r.body)
		}
		var list v1alpha1.ApplicationList
		r.json(t, &list)
		var out []string
		for _, a := range list.Items {
			out = append(out, a.Name)
		}
		slices.Sort(out)
		return out
	}
	for query, want := range map[string][]string{
		"":                      {"guestbook", "other", "unset"},
		"?projects=default":     {"guestbook", "unset"},
		"?projects=x,other":     {"other"},
		"?selector=team%3Db":    {"other"},
		"?selector=team+in+(a)": {"guestbook"},
	} {
		if got := names(alice, query); !slices.Equal(got, want) {
			t.Errorf("alice lists %v with %q, want %v", got, query, want)
		}
	}
	wantError(t, h.do(http.MethodGet, "/api/v1/applications?selector=team+%3D%3D%3D", alice, nil), http.StatusBadRequest)

	r := h.do(http.MethodGet, "/api/v1/applications/guestbook", alice, nil)
	if r.status != http.StatusOK {
		t.Fatalf("alice gets guestbook: %d %s", r.status, r.body)
	}
	wantError(t, h.do(http.MethodGet, "/api/v1/applications/missing", alice, nil), http.StatusNotFound)
	wantError(t, h.do(http.MethodGet, "/api/v1/applications/guestbook?refresh=soon", alice, nil), http.StatusBadRequest)

	// A readonly user may not sync: 403 and no operation.
	wantError(t, h.do(http.MethodPost, "/api/v1/applications/guestbook/sync", alice, map[string]any{"prune": true}), http.StatusForbidden)
	if op := h.getApp("guestbook").Operation; op != nil {
		t.Fatalf("operation %+v set by a refused sync", op)
	}

	// Admin may; the sync is requested the way Argo CD's API requests it.
	wantError(t, h.do(http.MethodPost, "/api/v1/applications/guestbook/sync", admin, []byte(`{"prune": "yes"}`)), http.StatusBadRequest)
	wantError(t, h.do(http.MethodPost, "/api/v1/applications/guestbook/sync", admin, map[string]any{"resources": []map[string]string{{"kind": "Deployment"}}}), http.StatusBadRequest)
	wantError(t, h.do(http.MethodPost, "/api/v1/applications/missing/sync", admin, map[string]any{}), http.StatusNotFound)
	r = h.do(http.MethodPost, "/api/v1/applications/guestbook/sync", admin, map[string]any{
		"revision": "main", "prune": true, "dryRun": true,
		"resources": []map[string]string{{"group": "apps", "kind": "Deployment", "name": "web"}},
	})
	if r.status != http.StatusOK {
		t.Fatalf("admin sync: %d %s", r.status, r.body)
	}
	op := h.getApp("guestbook").Operation
	if op == nil || op.Sync == nil || op.Sync.Revision != "main" || !op.Sync.Prune || !op.Sync.DryRun ||
		len(op.Sync.Resources) != 1 || op.Sync.Resources[0].Name != "web" || op.InitiatedBy.Username != "admin" {
		t.Fatalf("operation %+v", op)
	}
	wantError(t, h.do(http.MethodPost, "/api/v1/applications/guestbook/sync", admin, map[string]any{}), http.StatusConflict)

	// Refresh sets the annotation the controller acts on.
	if r := h.do(http.MethodGet, "/api/v1/applications/other?refresh=hard", alice, nil); r.status != http.StatusOK {
		t.Fatalf("refresh: %d %s", r.status, r.body)
	}
	if got := h.getApp("other").Annotations[v1alpha1.AnnotationRefresh]; got != "hard" {
		t.Errorf("refresh annotation %q, want hard", got)
	}

	// A policy change applies to the next call: alice may now sync project other.
	h.setRBAC(map[string]string{"policy.csv": "g, alice, role:readonly\np, alice, applications, sync, other/*, allow\n"})
	if r := h.do(http.MethodPost, "/api/v1/applications/other/sync", alice, map[string]any{}); r.status != http.StatusOK {
		t.Fatalf("alice syncs other after the policy change: %d %s", r.status, r.body)
	}

	// Projects: readonly may get every project.
	r = h.do(http.MethodGet, "/api/v1/projects", alice, nil)
	if r.status != http.StatusOK {
		t.Fatalf("projects: %d %s", r.status, r.body)
	}

	// A disabled account's session ends at once.
	cm := h.configMap()
	cm.Data["accounts.alice.enabled"] = "false"
	if err := h.k8s.Update(context.Background(), cm); err != nil {
		t.Fatal(err)
	}
	wantError(t, h.do(http.MethodGet, "/api/v1/applications", alice, nil), http.StatusUnauthorized)
	wantError(t, h.do(http.MethodPost, "/api/v1/session", "", map[string]string{"username": "alice", "password": "alice-password"}), http.StatusUnauthorized)
}

func TestUserWithoutRoleSeesNothing(t *testing.T) {
	h := startServer(t)
	h.addUser("bob", "bob-password")
	h.createApp("guestbook", "default", nil, v1alpha1.ApplicationSource{RepoURL: "https://github.com/org/repo", TargetRevision: "HEAD"})
	bob := h.login("bob", "bob-password")
	r := h.do(http.MethodGet, "/api/v1/applications", bob, nil)
	var list v1alpha1.ApplicationList
	r.json(t, &list)
	if r.status != http.StatusOK || len(list.Items) != 0 {
		t.Errorf("bob lists %d apps (%d), want none", len(list.Items), r.status)
	}
	wantError(t, h.do(http.MethodGet, "/api/v1/applications/guestbook", bob, nil), http.StatusForbidden)
}

func TestLoginRateLimit(t *testing.T) {
	h := startServer(t)
	wrong := map[string]string{"username": "admin", "password": "wrong"}
	for i := range defaultMaxLoginFailures {
		wantError(t, h.do(http.MethodPost, "/api/v1/session", "", wrong), http.StatusUnauthorized)
		_ = i
	}
	// Now even the right password is refused until the window passes.
	r := h.do(http.MethodPost, "/api/v1/session", "", map[string]string{"username": "admin", "password": h.password})
	wantError(t, r, http.StatusTooManyRequests)
	if r.header.Get("Retry-After") == "" {
		t.Error("no Retry-After header")
	}
	// The client address is limited as well: another user name is refused.
	wantError(t, h.do(http.MethodPost, "/api/v1/session", "", map[string]string{"username": "nobody", "password": "x"}), http.StatusTooManyRequests)

	h.clock.Add(defaultFailureWindow + time.Second)
	h.login("admin", h.password)
}

func TestInsecureServesPlainHTTPWithoutSecureCookies(t *testing.T) {
	h := startServerWith(t, Options{Insecure: true})
	r := h.do(http.MethodPost, "/api/v1/session", "", map[string]string{"username": "admin", "password": h.password})
	if r.status != http.StatusOK {
		t.Fatalf("login over HTTP: %d %s", r.status, r.body)
	}
	cookies := (&http.Response{Header: r.header}).Cookies()
	if len(cookies) != 1 || cookies[0].Secure || !cookies[0].HttpOnly {
		t.Errorf("cookies %+v, want one HttpOnly cookie without Secure", cookies)
	}
}
