package server

import (
	"context"
	"net/http"
	"slices"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/skiffcd/skiff/api/v1alpha1"
)

// updateApp changes an Application (it has no status subresource, so the
// test can write the status the controller would).
func (h *harness) updateApp(name string, edit func(*v1alpha1.Application)) {
	h.t.Helper()
	app := h.getApp(name)
	edit(app)
	if err := h.k8s.Update(context.Background(), app); err != nil {
		h.t.Fatal(err)
	}
}

// Rollback, terminate and delete through the API, as `argocd app rollback`,
// `terminate-op` and `delete` do them: readonly is refused, admin's
// rollback syncs the previous history entry, terminate marks the running
// operation Terminating, and delete with and without cascade sets or drops
// the resources finalizer.
func TestRollbackTerminateAndDelete(t *testing.T) {
	h := startServer(t)
	h.addUser("alice", "alice-password")
	h.setRBAC(map[string]string{"policy.csv": "g, alice, role:readonly\n"})
	src := v1alpha1.ApplicationSource{RepoURL: "https://github.com/org/repo", Path: "guestbook"}
	h.createApp("guestbook", "default", nil, src)
	h.createApp("keep", "default", nil, src)
	h.createApp("cascade", "default", nil, src)
	alice, admin := h.login("alice", "alice-password"), h.login("admin", h.password)
	at := metav1.Now()
	h.updateApp("guestbook", func(app *v1alpha1.Application) {
		app.Status.History = []v1alpha1.RevisionHistory{
			{ID: 0, Revision: "aaa", DeployedAt: at, Source: src},
			{ID: 1, Revision: "bbb", DeployedAt: at, Source: src},
		}
	})

	for _, call := range []struct{ method, path string }{
		{http.MethodPost, "/api/v1/applications/guestbook/rollback"},
		{http.MethodDelete, "/api/v1/applications/guestbook/operation"},
		{http.MethodDelete, "/api/v1/applications/guestbook"},
	} {
		wantError(t, h.do(call.method, call.path, alice, nil), http.StatusForbidden)
	}

	if r := h.do(http.MethodPost, "/api/v1/applications/guestbook/rollback", admin, map[string]any{"prune": true}); r.status != http.StatusOK {
		t.Fatalf("rollback: %d %s", r.status, r.body)
	}
	op := h.getApp("guestbook").Operation
	if op == nil || op.Sync == nil || op.Sync.Revision != "aaa" || !op.Sync.Prune || op.InitiatedBy.Username != "admin" {
		t.Fatalf("rollback operation %+v, want a sync of aaa with prune by admin", op)
	}
	wantError(t, h.do(http.MethodPost, "/api/v1/applications/guestbook/rollback", admin, map[string]any{"id": 0}), http.StatusConflict)
	wantError(t, h.do(http.MethodPost, "/api/v1/applications/keep/rollback", admin, map[string]any{}), http.StatusBadRequest) // no history
	h.updateApp("keep", func(app *v1alpha1.Application) {
		app.Spec.SyncPolicy = &v1alpha1.SyncPolicy{Automated: &v1alpha1.SyncPolicyAutomated{}}
		app.Status.History = h.getApp("guestbook").Status.History
	})
	wantError(t, h.do(http.MethodPost, "/api/v1/applications/keep/rollback", admin, map[string]any{"id": 0}), http.StatusBadRequest) // automated sync
	h.updateApp("keep", func(app *v1alpha1.Application) { app.Spec.SyncPolicy = nil })

	wantError(t, h.do(http.MethodDelete, "/api/v1/applications/keep/operation", admin, nil), http.StatusConflict)
	h.updateApp("guestbook", func(app *v1alpha1.Application) {
		app.Status.OperationState = &v1alpha1.OperationState{Operation: *app.Operation, Phase: v1alpha1.OperationRunning, StartedAt: at}
	})
	if r := h.do(http.MethodDelete, "/api/v1/applications/guestbook/operation", admin, nil); r.status != http.StatusOK {
		t.Fatalf("terminate: %d %s", r.status, r.body)
	}
	if phase := h.getApp("guestbook").Status.OperationState.Phase; phase != v1alpha1.OperationTerminating {
		t.Errorf("operation phase %s after terminate, want Terminating", phase)
	}

	wantError(t, h.do(http.MethodDelete, "/api/v1/applications/keep?cascade=true&propagationPolicy=sideways", admin, nil), http.StatusBadRequest)
	if r := h.do(http.MethodDelete, "/api/v1/applications/keep?cascade=false", admin, nil); r.status != http.StatusOK {
		t.Fatalf("delete without cascade: %d %s", r.status, r.body)
	}
	if err := h.k8s.Get(context.Background(), client.ObjectKey{Namespace: h.ns, Name: "keep"}, &v1alpha1.Application{}); !apierrors.IsNotFound(err) {
		t.Errorf("keep after delete without cascade: %v, want gone", err)
	}
	if r := h.do(http.MethodDelete, "/api/v1/applications/cascade?propagationPolicy=background", admin, nil); r.status != http.StatusOK {
		t.Fatalf("delete with cascade: %d %s", r.status, r.body)
	}
	// No controller runs here to process the finalizer: the app waits for it.
	app := h.getApp("cascade")
	if app.DeletionTimestamp == nil || !slices.Contains(app.Finalizers, v1alpha1.FinalizerResourcesBackground) {
		t.Errorf("cascade delete left deletion %v finalizers %v, want deleting with %s", app.DeletionTimestamp, app.Finalizers, v1alpha1.FinalizerResourcesBackground)
	}
	h.updateApp("cascade", func(app *v1alpha1.Application) { app.Finalizers = nil }) // let the namespace go
}
