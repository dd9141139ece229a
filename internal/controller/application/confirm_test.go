package application

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/skiffcd/skiff/api/v1alpha1"
	"github.com/skiffcd/skiff/internal/appops"
	"github.com/skiffcd/skiff/internal/testcluster"
	"github.com/skiffcd/skiff/internal/testgit"
	"github.com/skiffcd/skiff/internal/testwait"
)

// approve approves what waits for a confirmation of app, as
// `skiff app confirm-deletion` does.
func approve(t *testing.T, c client.Client, key client.ObjectKey) {
	t.Helper()
	app := &v1alpha1.Application{}
	if err := c.Get(context.Background(), key, app); err != nil {
		t.Fatal(err)
	}
	patch := client.MergeFrom(app.DeepCopy())
	appops.ApproveDeletion(app, time.Now())
	if err := c.Patch(context.Background(), app, patch); err != nil {
		t.Fatal(err)
	}
}

// syncedConfirmApp creates and syncs an app of testdata/confirm (with the
// resources finalizer) and returns it with its repository.
func syncedConfirmApp(t *testing.T, c client.Client, argocd, dest string) (*v1alpha1.Application, *testgit.Repo) {
	t.Helper()
	repo := testgit.New(t)
	sha := repo.Commit(testgit.Dir(t, "testdata/confirm", "app"))
	app := newApp(argocd, "guarded", repo.URL(), "app", dest, nil)
	app.Finalizers = []string{v1alpha1.FinalizerResources}
	if err := c.Create(context.Background(), app); err != nil {
		t.Fatal(err)
	}
	requestSync(t, c, app, v1alpha1.SyncOperation{Revision: sha})
	app = waitApp(t, c, client.ObjectKeyFromObject(app), "the first sync", func(a *v1alpha1.Application) bool {
		return a.Status.Sync.Status == v1alpha1.SyncStatusCodeSynced && a.Operation == nil &&
			a.Status.OperationState != nil && a.Status.OperationState.Phase == v1alpha1.OperationSucceeded
	})
	return app, repo
}

// A sync that would prune a Prune=confirm object stays Running, with Argo
// CD's message and the object in place and flagged, until the app's
// deletion is approved; then it prunes it and succeeds.
func TestPruneConfirmHoldsTheSyncUntilApproved(t *testing.T) {
	argocd, dest := cluster.Namespace(t), cluster.Namespace(t)
	c := startController(t, argocd)
	app, repo := syncedConfirmApp(t, c, argocd, dest)
	key := client.ObjectKeyFromObject(app)
	sha := repo.Commit(map[string]string{"app/precious.yaml": ""})
	requestSync(t, c, app, v1alpha1.SyncOperation{Revision: sha, Prune: true})

	const want = "waiting for pruning confirmation of v1/ConfigMap/precious"
	waitApp(t, c, key, "the sync to wait for the confirmation", func(a *v1alpha1.Application) bool {
		s := a.Status.OperationState
		return s != nil && s.Phase == v1alpha1.OperationRunning && s.Message == want
	})
	testwait.Consistently(t, "the sync to keep waiting, the object in place", 3*time.Second, func() error {
		got := &v1alpha1.Application{}
		if err := c.Get(context.Background(), key, got); err != nil {
			return err
		}
		if s := got.Status.OperationState; s.Phase != v1alpha1.OperationRunning || s.Message != want {
			return fmt.Errorf("operation %s: %s", s.Phase, s.Message)
		}
		if !configMapExists(t, c, dest, "precious") {
			return fmt.Errorf("pruned without a confirmation")
		}
		return nil
	}, testwait.Interval(250*time.Millisecond))
	waitApp(t, c, key, "the object flagged as needing a confirmation", func(a *v1alpha1.Application) bool {
		return slices.ContainsFunc(a.Status.Resources, func(rs v1alpha1.ResourceStatus) bool {
			return rs.Name == "precious" && rs.RequiresPruning && rs.RequiresDeletionConfirmation
		}) && a.Status.Sync.Status == v1alpha1.SyncStatusCodeOutOfSync
	})

	approve(t, c, key)
	waitApp(t, c, key, "the approved sync to prune and succeed", func(a *v1alpha1.Application) bool {
		s := a.Status.OperationState
		return a.Operation == nil && s.Phase == v1alpha1.OperationSucceeded && !configMapExists(t, c, dest, "precious")
	})
}

// Deleting an app with a Delete=confirm object deletes none of its
// resources until the deletion is approved, saying so in a DeletionError;
// the approval lets everything go.
func TestDeleteConfirmHoldsTheCascadeUntilApproved(t *testing.T) {
	ctx := context.Background()
	argocd, dest := cluster.Namespace(t), cluster.Namespace(t)
	c := startController(t, argocd)
	app, _ := syncedConfirmApp(t, c, argocd, dest)
	key := client.ObjectKeyFromObject(app)
	if err := c.Delete(ctx, app); err != nil {
		t.Fatal(err)
	}
	waitApp(t, c, key, "a DeletionError asking for the confirmation", func(a *v1alpha1.Application) bool {
		return slices.ContainsFunc(a.Status.Conditions, func(cond v1alpha1.ApplicationCondition) bool {
			return cond.Type == v1alpha1.ApplicationConditionDeletionError &&
				strings.Contains(cond.Message, "waiting for deletion confirmation of v1/ConfigMap/precious")
		})
	})
	for _, name := range []string{"settings", "precious"} {
		if !configMapExists(t, c, dest, name) {
			t.Errorf("ConfigMap %s was deleted before the confirmation", name)
		}
	}

	approve(t, c, key)
	testwait.Eventually(t, "the Application to go once approved", testcluster.Gone(c, app), testwait.Timeout(60*time.Second))
	for _, name := range []string{"settings", "precious"} {
		if configMapExists(t, c, dest, name) {
			t.Errorf("ConfigMap %s survived the approved deletion", name)
		}
	}
}
