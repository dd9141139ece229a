package application

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/skiffcd/skiff/api/v1alpha1"
	"github.com/skiffcd/skiff/internal/testcluster"
	"github.com/skiffcd/skiff/internal/testgit"
	"github.com/skiffcd/skiff/internal/testwait"
)

// syncedWithHooks creates an app of testdata/dir with the resources
// finalizer, syncs it and waits until it is Synced with the PostDelete
// finalizers the comparison adds.
func syncedWithHooks(t *testing.T, c client.Client, argocd, dest, dir string) *v1alpha1.Application {
	t.Helper()
	repo := testgit.New(t)
	sha := repo.Commit(testgit.Dir(t, "testdata/"+dir, "app"))
	app := newApp(argocd, "teardown", repo.URL(), "app", dest, nil)
	app.Finalizers = []string{v1alpha1.FinalizerResources}
	if err := c.Create(context.Background(), app); err != nil {
		t.Fatal(err)
	}
	requestSync(t, c, app, v1alpha1.SyncOperation{Revision: sha})
	return waitApp(t, c, client.ObjectKeyFromObject(app), "Synced with the PostDelete finalizers", func(a *v1alpha1.Application) bool {
		return a.Status.Sync.Status == v1alpha1.SyncStatusCodeSynced && a.Operation == nil &&
			a.Status.OperationState != nil && a.Status.OperationState.Phase == v1alpha1.OperationSucceeded &&
			a.HasFinalizer(v1alpha1.FinalizerPostDelete) && a.HasFinalizer(v1alpha1.FinalizerPostDeleteCleanup)
	})
}

// A PostDelete Job is never applied by a sync; deleting the app runs it
// once the app's other resources are gone, and the app goes when it has
// succeeded, its HookSucceeded policy deleting it.
func TestPostDeleteHookRunsOnlyOnDeletionAfterTheResources(t *testing.T) {
	ctx := context.Background()
	argocd, dest := cluster.Namespace(t), cluster.Namespace(t)
	c := startController(t, argocd)
	app := syncedWithHooks(t, c, argocd, dest, "postdelete")
	if !configMapExists(t, c, dest, "settings") {
		t.Fatal("the sync did not apply the ConfigMap")
	}
	if err := c.Get(ctx, client.ObjectKey{Namespace: dest, Name: "cleanup"}, &batchv1.Job{}); !apierrors.IsNotFound(err) {
		t.Fatalf("the sync applied the PostDelete Job (get: %v)", err)
	}
	if slices.ContainsFunc(app.Status.Resources, func(rs v1alpha1.ResourceStatus) bool { return rs.Name == "cleanup" }) {
		t.Errorf("the PostDelete hook is among the app's resources: %+v", app.Status.Resources)
	}

	if err := c.Delete(ctx, app); err != nil {
		t.Fatal(err)
	}
	job := waitJob(t, c, dest, "cleanup", "the PostDelete Job to be created", func(*batchv1.Job) bool { return true })
	if configMapExists(t, c, dest, "settings") {
		t.Error("the PostDelete Job was created before the app's ConfigMap was deleted")
	}
	// Suspended, the hook has not succeeded: the app waits for it.
	testwait.Consistently(t, "the app to wait for its PostDelete hook", 2*time.Second, func() error {
		got := &v1alpha1.Application{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(app), got); err != nil {
			return err
		}
		if !got.HasFinalizer(v1alpha1.FinalizerPostDelete) {
			return fmt.Errorf("finalizers %v", got.Finalizers)
		}
		return nil
	}, testwait.Interval(200*time.Millisecond))

	if err := c.Patch(ctx, job, client.RawPatch(types.MergePatchType, []byte(`{"spec":{"suspend":false}}`))); err != nil {
		t.Fatal(err)
	}
	testwait.Eventually(t, "the Application to go once its hook succeeded", testcluster.Gone(c, app), testwait.Timeout(60*time.Second))
	testwait.Eventually(t, "HookSucceeded to delete the Job", testcluster.Gone(c, job), testwait.Timeout(30*time.Second))
}

// A PostDelete hook that fails keeps the deleted app, with a DeletionError
// naming it; deleting the failed hook runs it again, and its success lets
// the app go.
func TestAFailedPostDeleteHookKeepsTheApp(t *testing.T) {
	ctx := context.Background()
	argocd, dest := cluster.Namespace(t), cluster.Namespace(t)
	c := startController(t, argocd)
	app := syncedWithHooks(t, c, argocd, dest, "postdelete-failing")
	if err := c.Delete(ctx, app); err != nil {
		t.Fatal(err)
	}
	pod := waitPod(t, c, dest, "cleanup")
	setPodPhase(t, c, pod, corev1.PodFailed)
	waitApp(t, c, client.ObjectKeyFromObject(app), "a DeletionError naming the failed hook", func(a *v1alpha1.Application) bool {
		for _, cond := range a.Status.Conditions {
			if cond.Type == v1alpha1.ApplicationConditionDeletionError && strings.Contains(cond.Message, "PostDelete hook failed: v1/Pod/cleanup") {
				return a.HasFinalizer(v1alpha1.FinalizerPostDelete)
			}
		}
		return false
	})

	if err := c.Delete(ctx, pod, client.GracePeriodSeconds(0)); err != nil {
		t.Fatal(err)
	}
	// Deleting it is watched: it comes back at once, faster than a test
	// may see it gone.
	again := &corev1.Pod{}
	testwait.Eventually(t, "the deleted hook to be created again and run", func() error {
		if err := c.Get(ctx, client.ObjectKeyFromObject(pod), again); err != nil {
			return err
		}
		if again.UID == pod.UID || again.Status.Phase != corev1.PodRunning {
			return fmt.Errorf("uid %s, phase %q", again.UID, again.Status.Phase)
		}
		return nil
	}, testwait.Timeout(time.Minute), testwait.Interval(200*time.Millisecond))
	setPodPhase(t, c, again, corev1.PodSucceeded)
	testwait.Eventually(t, "the Application to go once the hook succeeded", testcluster.Gone(c, app), testwait.Timeout(60*time.Second))
}

// waitPod waits (up to a minute) for Pod ns/name to run: the phase the
// test then writes is not overwritten by the fake kubelet's first.
func waitPod(t *testing.T, c client.Client, ns, name string) *corev1.Pod {
	t.Helper()
	pod := &corev1.Pod{}
	testwait.Eventually(t, "Pod "+name+" to run", func() error {
		if err := c.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, pod); err != nil {
			return err
		}
		if pod.Status.Phase != corev1.PodRunning {
			return fmt.Errorf("phase %q", pod.Status.Phase)
		}
		return nil
	}, testwait.Timeout(time.Minute), testwait.Interval(200*time.Millisecond))
	return pod.DeepCopy()
}

// setPodPhase writes pod's phase as a kubelet would.
func setPodPhase(t *testing.T, c client.Client, pod *corev1.Pod, phase corev1.PodPhase) {
	t.Helper()
	patch := fmt.Appendf(nil, `{"status":{"phase":%q}}`, phase)
	if err := c.Status().Patch(context.Background(), pod, client.RawPatch(types.MergePatchType, patch)); err != nil {
		t.Fatal(err)
	}
}
