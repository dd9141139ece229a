package application

import (
	"context"
	"fmt"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/skiffcd/skiff/api/v1alpha1"
	"github.com/skiffcd/skiff/internal/testgit"
	"github.com/skiffcd/skiff/internal/testwait"
)

// A controller restart in the middle of a sync, with the PreSync Job (a
// migration) done and a Sync hook running: the next controller resumes the
// operation from the hook results the first recorded. The migration is not
// deleted and run again (BeforeHookCreation used to replace it), and the
// operation finishes once the Sync hook completes.
func TestARestartedSyncDoesNotRunCompletedHooksAgain(t *testing.T) {
	ctx := context.Background()
	argocd, dest := cluster.Namespace(t), cluster.Namespace(t)
	repo := testgit.New(t)
	sha := repo.Commit(testgit.Dir(t, "testdata/hooks", "app"))
	c, _, stop := startStoppableReconciler(t, argocd, 3*time.Second)
	app := newApp(argocd, "migrations", repo.URL(), "app", dest, nil)
	if err := c.Create(ctx, app); err != nil {
		t.Fatal(err)
	}
	requestSync(t, c, app, v1alpha1.SyncOperation{Revision: sha})

	migrate := waitJob(t, c, dest, "migrate", "the migration to complete", complete)
	waitJob(t, c, dest, "smoke-test", "the Sync hook to start", func(*batchv1.Job) bool { return true })
	stop()

	startController(t, argocd)
	key := client.ObjectKeyFromObject(app)
	// Let the Sync hook run (its manifest holds it suspended) until the
	// operation ends; a re-created hook would be suspended again.
	testwait.Eventually(t, "the resumed operation to end", func() error {
		job := &batchv1.Job{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: dest, Name: "smoke-test"}, job); err == nil && job.Spec.Suspend != nil && *job.Spec.Suspend {
			if err := c.Patch(ctx, job, client.RawPatch(types.MergePatchType, []byte(`{"spec":{"suspend":false}}`))); err != nil {
				return err
			}
		}
		if err := c.Get(ctx, key, app); err != nil {
			return err
		}
		if app.Operation != nil || app.Status.OperationState == nil || app.Status.OperationState.Phase == v1alpha1.OperationRunning {
			return fmt.Errorf("operation %v, state %+v", app.Operation != nil, app.Status.OperationState)
		}
		return nil
	}, testwait.Timeout(time.Minute), testwait.Interval(200*time.Millisecond))
	if state := app.Status.OperationState; state.Phase != v1alpha1.OperationSucceeded {
		t.Fatalf("the resumed operation %s: %s", state.Phase, state.Message)
	}

	after := &batchv1.Job{}
	if err := c.Get(ctx, client.ObjectKeyFromObject(migrate), after); err != nil {
		t.Fatal(err)
	}
	if after.UID != migrate.UID {
		t.Errorf("the PreSync Job ran again after the restart: UID %s, then %s", migrate.UID, after.UID)
	}
	hooks := map[string]v1alpha1.ResourceResult{}
	for _, res := range app.Status.OperationState.SyncResult.Resources {
		if res.HookType != "" {
			hooks[res.Name] = res
		}
	}
	if m, s := hooks["migrate"], hooks["smoke-test"]; m.HookType != "PreSync" || m.HookPhase != v1alpha1.OperationSucceeded ||
		s.HookType != "Sync" || s.HookPhase != v1alpha1.OperationSucceeded {
		t.Errorf("hook results %+v, want the PreSync and the Sync hook Succeeded", hooks)
	}
	if len(app.Status.History) != 1 || app.Status.History[0].Revision != sha {
		t.Errorf("history %+v, want exactly one entry at %s", app.Status.History, sha)
	}
}

func complete(job *batchv1.Job) bool {
	for _, c := range job.Status.Conditions {
		if c.Type == batchv1.JobComplete && c.Status == "True" {
			return true
		}
	}
	return false
}

// waitJob waits (up to a minute) for Job ns/name to exist and satisfy cond.
func waitJob(t *testing.T, c client.Client, ns, name, what string, cond func(*batchv1.Job) bool) *batchv1.Job {
	t.Helper()
	job := &batchv1.Job{}
	testwait.Eventually(t, what, func() error {
		if err := c.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, job); err != nil {
			return err
		}
		if !cond(job) {
			return fmt.Errorf("status %+v", job.Status)
		}
		return nil
	}, testwait.Timeout(time.Minute), testwait.Interval(200*time.Millisecond))
	return job.DeepCopy()
}
