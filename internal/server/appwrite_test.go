package server

import (
	"net/http"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/skiffcd/skiff/api/v1alpha1"
)

// newAppBody is an Application as a client sends it.
func newAppBody(name, project, path string) *v1alpha1.Application {
	return &v1alpha1.Application{
		TypeMeta:   metav1.TypeMeta{APIVersion: v1alpha1.GroupVersion.String(), Kind: "Application"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "somewhere-else"},
		Spec: v1alpha1.ApplicationSpec{
			Project:     project,
			Source:      &v1alpha1.ApplicationSource{RepoURL: "https://github.com/org/repo", Path: path},
			Destination: v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: "web"},
		},
	}
}

// Creating and updating apps as `argocd app create [--upsert]` and `argocd
// app set` do: RBAC create and update on <project>/<name>, the project must
// exist (a missing default project counts), the namespace is Skiff's, an
// existing app is 409 without upsert, and an update keeps the status and
// refuses a stale resourceVersion.
func TestCreateAndUpdateApplications(t *testing.T) {
	h := startServer(t)
	h.addUser("alice", "alice-password")
	h.addUser("bob", "bob-password")
	h.setRBAC(map[string]string{"policy.csv": "p, alice, applications, create, default/*, allow\n" +
		"p, alice, applications, get, default/*, allow\ng, bob, role:readonly\n"})
	admin, alice, bob := h.login("admin", h.password), h.login("alice", "alice-password"), h.login("bob", "bob-password")
	const apps = "/api/v1/applications"

	r := h.do(http.MethodPost, apps, alice, newAppBody("web", "", "web"))
	if r.status != http.StatusOK {
		t.Fatalf("alice creates web: %d %s", r.status, r.body)
	}
	var created v1alpha1.Application
	r.json(t, &created)
	if created.Namespace != h.ns || created.UID == "" || h.getApp("web").Spec.Source.Path != "web" {
		t.Fatalf("created %s/%s uid %q, want it in %s", created.Namespace, created.Name, created.UID, h.ns)
	}
	wantError(t, h.do(http.MethodPost, apps, alice, newAppBody("web", "default", "web")), http.StatusConflict)
	wantError(t, h.do(http.MethodPost, apps+"?upsert=true", alice, newAppBody("web", "default", "changed")), http.StatusForbidden)
	wantError(t, h.do(http.MethodPost, apps, bob, newAppBody("api", "default", "api")), http.StatusForbidden)
	wantError(t, h.do(http.MethodPost, apps, admin, newAppBody("api", "no-such-project", "api")), http.StatusBadRequest)
	wantError(t, h.do(http.MethodPost, apps, admin, newAppBody("Not_A_Name", "default", "api")), http.StatusBadRequest)
	noSource := newAppBody("api", "default", "api")
	noSource.Spec.Source = nil
	wantError(t, h.do(http.MethodPost, apps, admin, noSource), http.StatusBadRequest)
	wantError(t, h.do(http.MethodPost, apps, admin, []byte(`{"metadata":`)), http.StatusBadRequest)

	// Upsert by admin replaces the spec and keeps what the controller wrote.
	h.updateApp("web", func(a *v1alpha1.Application) { a.Status.Sync.Status = v1alpha1.SyncStatusCodeSynced })
	if r := h.do(http.MethodPost, apps+"?upsert=true", admin, newAppBody("web", "default", "changed")); r.status != http.StatusOK {
		t.Fatalf("admin upserts web: %d %s", r.status, r.body)
	}
	if app := h.getApp("web"); app.Spec.Source.Path != "changed" || app.Status.Sync.Status != v1alpha1.SyncStatusCodeSynced {
		t.Fatalf("after upsert path %q sync %q, want changed and the status kept", app.Spec.Source.Path, app.Status.Sync.Status)
	}

	// Update.
	current := h.getApp("web")
	body := newAppBody("web", "default", "updated")
	body.Labels = map[string]string{"team": "shop"}
	body.ResourceVersion = current.ResourceVersion
	wantError(t, h.do(http.MethodPut, apps+"/other-name", admin, body), http.StatusBadRequest)
	wantError(t, h.do(http.MethodPut, apps+"/web", alice, body), http.StatusForbidden)
	r = h.do(http.MethodPut, apps+"/web", admin, body)
	if r.status != http.StatusOK {
		t.Fatalf("admin updates web: %d %s", r.status, r.body)
	}
	app := h.getApp("web")
	if app.Spec.Source.Path != "updated" || app.Labels["team"] != "shop" || app.Status.Sync.Status != v1alpha1.SyncStatusCodeSynced {
		t.Fatalf("after update path %q labels %v sync %q", app.Spec.Source.Path, app.Labels, app.Status.Sync.Status)
	}
	body.Spec.Source.Path = "stale"
	wantError(t, h.do(http.MethodPut, apps+"/web", admin, body), http.StatusConflict) // resourceVersion of before the update
	wantError(t, h.do(http.MethodPut, apps+"/missing", admin, newAppBody("missing", "default", "x")), http.StatusNotFound)
}
