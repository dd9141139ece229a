package appcli

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/skiffcd/skiff/api/v1alpha1"
	"github.com/skiffcd/skiff/internal/appops"
	"github.com/skiffcd/skiff/internal/cli/sessioncli"
)

// request is what the fake API server saw.
type request struct {
	method, uri, auth, body string
}

// fakeAPI answers every request with status and body and records it.
func fakeAPI(t *testing.T, status int, body string) (*API, *request) {
	t.Helper()
	seen := &request{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		data, _ := io.ReadAll(r.Body)
		*seen = request{method: r.Method, uri: r.URL.RequestURI(), auth: r.Header.Get("Authorization"), body: strings.TrimSpace(string(data))}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = io.WriteString(w, body)
	}))
	t.Cleanup(srv.Close)
	cfg := &sessioncli.Config{Server: srv.URL, Token: "t0k3n"}
	return &API{Client: sessioncli.NewClient(cfg)}, seen
}

// Each call sends the request of the API contract with the session's
// token.
func TestAPIRequests(t *testing.T) {
	app := &v1alpha1.Application{}
	app.Name, app.Namespace = "web", "argocd"
	tests := map[string]struct {
		call   func(context.Context, *API) error
		method string
		uri    string
		// wantBody starts the body sent.
		wantBody string
	}{
		"list by projects and selector": {
			call: func(ctx context.Context, a *API) error {
				_, err := a.List(ctx, []string{"a", "b"}, "team=x")
				return err
			},
			method: "GET", uri: "/api/v1/applications?projects=a%2Cb&selector=team%3Dx",
		},
		"list all": {
			call:   func(ctx context.Context, a *API) error { _, err := a.List(ctx, nil, ""); return err },
			method: "GET", uri: "/api/v1/applications",
		},
		"get with a hard refresh": {
			call:   func(ctx context.Context, a *API) error { _, err := a.Get(ctx, "web", "hard"); return err },
			method: "GET", uri: "/api/v1/applications/web?refresh=hard",
		},
		"create leaves the namespace to the server": {
			call:   func(ctx context.Context, a *API) error { return a.Create(ctx, app) },
			method: "POST", uri: "/api/v1/applications",
			wantBody: `{"metadata":{"name":"web"},"spec":`,
		},
		"update": {
			call:   func(ctx context.Context, a *API) error { return a.Update(ctx, app) },
			method: "PUT", uri: "/api/v1/applications/web",
		},
		"sync": {
			call: func(ctx context.Context, a *API) error {
				_, err := a.Sync(ctx, "web", &v1alpha1.SyncOperation{Revision: "main", Prune: true,
					Resources: []v1alpha1.SyncOperationResource{{Kind: "ConfigMap", Name: "settings"}}})
				return err
			},
			method: "POST", uri: "/api/v1/applications/web/sync",
			wantBody: `{"revision":"main","prune":true,"resources":[{"kind":"ConfigMap","name":"settings"}]}`,
		},
		"rollback to the previous entry sends no id": {
			call:   func(ctx context.Context, a *API) error { _, err := a.Rollback(ctx, "web", -1, false); return err },
			method: "POST", uri: "/api/v1/applications/web/rollback", wantBody: `{"prune":false}`,
		},
		"rollback to entry 0": {
			call:   func(ctx context.Context, a *API) error { _, err := a.Rollback(ctx, "web", 0, true); return err },
			method: "POST", uri: "/api/v1/applications/web/rollback", wantBody: `{"id":0,"prune":true}`,
		},
		"terminate": {
			call:   func(ctx context.Context, a *API) error { return a.Terminate(ctx, "web") },
			method: "DELETE", uri: "/api/v1/applications/web/operation",
		},
		"delete with background cascade": {
			call:   func(ctx context.Context, a *API) error { return a.Delete(ctx, "web", true, "Background") },
			method: "DELETE", uri: "/api/v1/applications/web?cascade=true&propagationPolicy=background",
		},
		"delete without cascade": {
			call:   func(ctx context.Context, a *API) error { return a.Delete(ctx, "web", false, "foreground") },
			method: "DELETE", uri: "/api/v1/applications/web?cascade=false",
		},
		"manifests at a revision": {
			call:   func(ctx context.Context, a *API) error { _, err := a.Manifests(ctx, "web", "v1.2"); return err },
			method: "GET", uri: "/api/v1/applications/web/manifests?revision=v1.2",
		},
		"a name is escaped": {
			call:   func(ctx context.Context, a *API) error { _, err := a.Get(ctx, "a b", ""); return err },
			method: "GET", uri: "/api/v1/applications/a%20b",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			a, seen := fakeAPI(t, http.StatusOK, "{}")
			if err := tc.call(context.Background(), a); err != nil {
				t.Fatal(err)
			}
			if seen.method != tc.method || seen.uri != tc.uri || seen.auth != "Bearer t0k3n" {
				t.Errorf("sent %s %s (%q), want %s %s with the token", seen.method, seen.uri, seen.auth, tc.method, tc.uri)
			}
			if !strings.HasPrefix(seen.body, tc.wantBody) {
				t.Errorf("body %s\nwant %s", seen.body, tc.wantBody)
			}
		})
	}
}

// Error answers become errors a user can act on, and the sentinels the
// shared logic relies on.
func TestAPIErrors(t *testing.T) {
	app := &v1alpha1.Application{}
	app.Name = "web"
	tests := map[string]struct {
		status  int
		call    func(context.Context, *API) error
		wantMsg string
		want    error
	}{
		"401 asks for a login": {
			status: 401, call: func(ctx context.Context, a *API) error { _, err := a.List(ctx, nil, ""); return err },
			wantMsg: "not logged in or session expired: run skiff login", want: ErrNotLoggedIn,
		},
		"403 shows the server's message": {
			status: 403, call: func(ctx context.Context, a *API) error {
				_, err := a.Sync(ctx, "web", &v1alpha1.SyncOperation{})
				return err
			},
			wantMsg: "syncing application web: denied by the server",
		},
		"409 on create is an existing app": {
			status: 409, call: func(ctx context.Context, a *API) error { return a.Create(ctx, app) }, want: ErrExists,
		},
		"409 on update is a conflict": {
			status: 409, call: func(ctx context.Context, a *API) error { return a.Update(ctx, app) }, want: ErrConflict,
		},
		"409 on terminate is no running operation": {
			status: 409, call: func(ctx context.Context, a *API) error { return a.Terminate(ctx, "web") }, want: appops.ErrNoRunningOperation,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			a, _ := fakeAPI(t, tc.status, `{"error":"denied by the server","code":0}`)
			err := tc.call(context.Background(), a)
			if err == nil {
				t.Fatal("no error")
			}
			if tc.wantMsg != "" && err.Error() != tc.wantMsg {
				t.Errorf("error %q, want %q", err, tc.wantMsg)
			}
			if tc.want != nil && !errors.Is(err, tc.want) {
				t.Errorf("error %v is not %v", err, tc.want)
			}
		})
	}
	a, _ := fakeAPI(t, 200, "{}")
	if _, err := a.Sync(context.Background(), "web", &v1alpha1.SyncOperation{SyncOptions: []string{"Replace=true"}}); err == nil ||
		!strings.Contains(err.Error(), "--core") {
		t.Errorf("sync options through the server: %v, want a pointer to --core", err)
	}
}

// Diff keeps the modified resources that are not hooks, in order; Manifests
// decodes the JSON strings.
func TestAPIDiffAndManifests(t *testing.T) {
	items := []map[string]any{
		{"kind": "Secret", "namespace": "ns", "name": "db", "modified": true, "diff": "-a\n+b\n"},
		{"kind": "ConfigMap", "namespace": "ns", "name": "same", "modified": false},
		{"group": "batch", "kind": "Job", "namespace": "ns", "name": "hook", "hook": true, "modified": true},
		{"group": "apps", "kind": "Deployment", "namespace": "ns", "name": "web", "modified": true, "diff": "-1\n+2\n"},
	}
	body, err := json.Marshal(map[string]any{"items": items})
	if err != nil {
		t.Fatal(err)
	}
	a, seen := fakeAPI(t, 200, string(body))
	diffs, err := a.Diff(context.Background(), "web", "")
	if err != nil {
		t.Fatal(err)
	}
	if seen.uri != "/api/v1/applications/web/managed-resources" {
		t.Errorf("asked %s", seen.uri)
	}
	want := []appops.ResourceDiff{
		{Kind: "Secret", Namespace: "ns", Name: "db", Diff: "-a\n+b\n"},
		{Group: "apps", Kind: "Deployment", Namespace: "ns", Name: "web", Diff: "-1\n+2\n"},
	}
	if len(diffs) != len(want) || diffs[0] != want[0] || diffs[1] != want[1] {
		t.Errorf("diffs %+v\nwant %+v", diffs, want)
	}
	if _, err := a.Diff(context.Background(), "web", "v2"); err == nil {
		t.Error("a diff at a revision through the server did not fail")
	}

	a, _ = fakeAPI(t, 200, `{"manifests":["{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"settings\"}}"],"revision":"abc"}`)
	objs, err := a.Manifests(context.Background(), "web", "")
	if err != nil || len(objs) != 1 || objs[0].GetKind() != "ConfigMap" || objs[0].GetName() != "settings" {
		t.Errorf("manifests %v (%v)", objs, err)
	}
}

// A 409 because the server read a stale Application is tried again; one
// because another operation runs is the answer.
func TestAPIRetriesStaleConflicts(t *testing.T) {
	for _, tc := range []struct {
		message  string
		failures int32
		wantErr  bool
		wantSent int32
	}{
		{message: "the application changed meanwhile: try again", failures: 2, wantSent: 3},
		{message: "another operation is already in progress", failures: 2, wantErr: true, wantSent: 1},
		{message: "the application changed meanwhile: try again", failures: 100, wantErr: true, wantSent: int32(ChangedBackoff.Steps)},
	} {
		var sent atomic.Int32
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			if sent.Add(1) <= tc.failures {
				w.WriteHeader(http.StatusConflict)
				_ = json.NewEncoder(w).Encode(map[string]any{"error": tc.message, "code": 409})
				return
			}
			_, _ = io.WriteString(w, "{}")
		}))
		a := &API{Client: sessioncli.NewClient(&sessioncli.Config{Server: srv.URL, Token: "t"})}
		err := a.Delete(context.Background(), "web", true, "")
		srv.Close()
		if (err != nil) != tc.wantErr || sent.Load() != tc.wantSent {
			t.Errorf("%q %d times: %v after %d requests, want error %v after %d", tc.message, tc.failures, err, sent.Load(), tc.wantErr, tc.wantSent)
		}
	}
}
