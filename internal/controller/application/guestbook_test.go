package application

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/skiffcd/skiff/api/v1alpha1"
	"github.com/skiffcd/skiff/internal/testcluster"
	"github.com/skiffcd/skiff/internal/testgit"
	"github.com/skiffcd/skiff/internal/testwait"
)

// waitApp reads the Application every 200 ms until cond holds (up to 60 s)
// and returns it.
func waitApp(t *testing.T, c client.Client, key client.ObjectKey, what string, cond func(*v1alpha1.Application) bool) *v1alpha1.Application {
	t.Helper()
	app := &v1alpha1.Application{}
	testwait.Eventually(t, what, func() error {
		if err := c.Get(context.Background(), key, app); err != nil {
			return err
		}
		if !cond(app) {
			status, _ := yaml.Marshal(app.Status)
			return fmt.Errorf("status:\n%s", status)
		}
		return nil
	}, testwait.Timeout(60*time.Second), testwait.Interval(200*time.Millisecond))
	return app
}

func requestSync(t *testing.T, c client.Client, app *v1alpha1.Application, op v1alpha1.SyncOperation) {
	t.Helper()
	patch := client.MergeFrom(app.DeepCopy())
	app.Operation = &v1alpha1.Operation{Sync: &op, InitiatedBy: v1alpha1.OperationInitiator{Username: "test"}}
	if err := c.Patch(context.Background(), app, patch); err != nil {
		t.Fatal(err)
	}
}

func statusIs(sync v1alpha1.SyncStatusCode, health v1alpha1.HealthStatusCode) func(*v1alpha1.Application) bool {
	return func(a *v1alpha1.Application) bool {
		return a.Status.Sync.Status == sync && a.Status.Health.Status == health
	}
}

// The flow of the seed articles: create the guestbook app with a manual
// policy, sync it, drift, self-heal, a new commit, and deletion with cascade.
func TestGuestbookFlow(t *testing.T) {
	ctx := context.Background()
	argocd := cluster.Namespace(t)
	dest := cluster.Namespace(t)
	c := startController(t, argocd)
	repo := testgit.New(t)
	first := repo.Commit(testgit.Dir(t, "testdata/guestbook", "guestbook"))

	app := &v1alpha1.Application{
		ObjectMeta: metav1.ObjectMeta{Name: "guestbook", Namespace: argocd, Finalizers: []string{v1alpha1.FinalizerResources}},
		Spec: v1alpha1.ApplicationSpec{
			Project:     "default",
			Source:      &v1alpha1.ApplicationSource{RepoURL: repo.URL(), Path: "guestbook", TargetRevision: "HEAD"},
			Destination: v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: dest},
		},
	}
	if err := c.Create(ctx, app); err != nil {
		t.Fatal(err)
	}
	key := client.ObjectKeyFromObject(app)
	app = waitApp(t, c, key, "OutOfSync/Missing", statusIs(v1alpha1.SyncStatusCodeOutOfSync, v1alpha1.HealthStatusMissing))
	if app.Status.Sync.Revision != first || len(app.Status.Resources) != 2 {
		t.Errorf("revision %s with %d resources, want %s with 2", app.Status.Sync.Revision, len(app.Status.Resources), first)
	}
	proj := &v1alpha1.AppProject{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: argocd, Name: "default"}, proj); err != nil {
		t.Errorf("the default project was not created: %v", err)
	}

	requestSync(t, c, app, v1alpha1.SyncOperation{})
	app = waitApp(t, c, key, "Synced/Healthy after sync", func(a *v1alpha1.Application) bool {
		return statusIs(v1alpha1.SyncStatusCodeSynced, v1alpha1.HealthStatusHealthy)(a) && a.Operation == nil &&
			a.Status.OperationState != nil && a.Status.OperationState.Phase == v1alpha1.OperationSucceeded
	})
	if len(app.Status.History) != 1 || app.Status.History[0].Revision != first {
		t.Errorf("history %+v, want one entry at %s", app.Status.History, first)
	}
	if got := app.Status.Summary.Images; len(got) != 1 || got[0] != "gcr.io/heptio-images/ks-guestbook-demo:0.2" {
		t.Errorf("summary images %v", got)
	}

	// Drift: scale the Deployment by hand.
	scale(t, c, dest, 3)
	app = waitApp(t, c, key, "OutOfSync after live drift", func(a *v1alpha1.Application) bool {
		return a.Status.Sync.Status == v1alpha1.SyncStatusCodeOutOfSync
	})
	// Turning on automated sync with self-heal puts git's replica count back.
	patch := client.MergeFrom(app.DeepCopy())
	app.Spec.SyncPolicy = &v1alpha1.SyncPolicy{Automated: &v1alpha1.SyncPolicyAutomated{Prune: true, SelfHeal: true}}
	if err := c.Patch(ctx, app, patch); err != nil {
		t.Fatal(err)
	}
	waitApp(t, c, key, "self-heal back to Synced", statusIs(v1alpha1.SyncStatusCodeSynced, v1alpha1.HealthStatusHealthy))
	if r := replicas(t, c, dest); r != 1 {
		t.Errorf("replicas %d after self-heal, want 1", r)
	}

	// A commit: more replicas in git; the next poll syncs it.
	deploy := testgit.Dir(t, "testdata/guestbook", "guestbook")["guestbook/guestbook-ui-deployment.yaml"]
	second := repo.Commit(map[string]string{"guestbook/guestbook-ui-deployment.yaml": strings.Replace(deploy, "replicas: 1", "replicas: 2", 1)})
	waitApp(t, c, key, "the new revision synced", func(a *v1alpha1.Application) bool {
		return a.Status.Sync.Revision == second && a.Status.Sync.Status == v1alpha1.SyncStatusCodeSynced &&
			a.Status.OperationState != nil && a.Status.OperationState.SyncResult != nil && a.Status.OperationState.SyncResult.Revision == second
	})
	if r := replicas(t, c, dest); r != 2 {
		t.Errorf("replicas %d after the commit, want 2", r)
	}

	// Deleting the app with the resources finalizer deletes what it deployed.
	if err := c.Delete(ctx, app); err != nil {
		t.Fatal(err)
	}
	testwait.Eventually(t, "the Application to be deleted", testcluster.Gone(c, app), testwait.Timeout(60*time.Second))
	for _, obj := range []client.Object{&appsv1.Deployment{}, &corev1.Service{}} {
		err := c.Get(ctx, client.ObjectKey{Namespace: dest, Name: "guestbook-ui"}, obj)
		if err == nil && obj.GetDeletionTimestamp() == nil {
			t.Errorf("%T guestbook-ui survived the cascading delete", obj)
		}
	}
}

func scale(t *testing.T, c client.Client, ns string, n int32) {
	t.Helper()
	d := &appsv1.Deployment{}
	if err := c.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "guestbook-ui"}, d); err != nil {
		t.Fatal(err)
	}
	d.Spec.Replicas = &n
	if err := c.Update(context.Background(), d, client.FieldOwner("kubectl-edit")); err != nil {
		t.Fatal(fmt.Errorf("scaling: %w", err))
	}
}

func replicas(t *testing.T, c client.Client, ns string) int32 {
	t.Helper()
	d := &appsv1.Deployment{}
	if err := c.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "guestbook-ui"}, d); err != nil {
		t.Fatal(err)
	}
	return *d.Spec.Replicas
}
