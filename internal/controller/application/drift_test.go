package application

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/skiffcd/skiff/api/v1alpha1"
	"github.com/skiffcd/skiff/internal/testgit"
	"github.com/skiffcd/skiff/internal/testwait"
)

const guestbookImage = "gcr.io/heptio-images/ks-guestbook-demo:0.2"

// After kubectl scale and kubectl edit of fields git sets, a sync puts
// git's values back, a label only kubectl added stays, and the app is
// Synced and stays so. A manual sync and the auto-sync of a new commit
// (without selfHeal) used to fail, for good, with "Apply failed with 1
// conflict: conflict with "kubectl" with subresource "scale"".
func TestSyncsTakeBackWhatKubectlChanged(t *testing.T) {
	tests := map[string]struct {
		// app names the Application; tracking ids hold only the name, so
		// each test's app needs its own.
		app    string
		policy *v1alpha1.SyncPolicy
		// sync starts a sync after the drift and returns the replicas git
		// then sets.
		sync func(t *testing.T, c client.Client, app *v1alpha1.Application, repo *testgit.Repo) int32
	}{
		"a manual sync": {
			app: "manual-drift",
			sync: func(t *testing.T, c client.Client, app *v1alpha1.Application, _ *testgit.Repo) int32 {
				requestSync(t, c, app, v1alpha1.SyncOperation{})
				return 1
			},
		},
		"the auto-sync of a new commit": {
			app:    "auto-drift",
			policy: &v1alpha1.SyncPolicy{Automated: &v1alpha1.SyncPolicyAutomated{Prune: true}},
			sync: func(t *testing.T, _ client.Client, _ *v1alpha1.Application, repo *testgit.Repo) int32 {
				deploy := testgit.Dir(t, "testdata/guestbook", "guestbook")["guestbook/guestbook-ui-deployment.yaml"]
				repo.Commit(map[string]string{"guestbook/guestbook-ui-deployment.yaml": strings.Replace(deploy, "replicas: 1", "replicas: 2", 1)})
				return 2
			},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			argocd, dest := cluster.Namespace(t), cluster.Namespace(t)
			c := startController(t, argocd)
			repo := testgit.New(t)
			repo.Commit(testgit.Dir(t, "testdata/guestbook", "guestbook"))
			app := newApp(argocd, tc.app, repo.URL(), "guestbook", dest, tc.policy)
			if err := c.Create(ctx, app); err != nil {
				t.Fatal(err)
			}
			key := client.ObjectKeyFromObject(app)
			if tc.policy == nil {
				requestSync(t, c, app, v1alpha1.SyncOperation{})
			}
			waitApp(t, c, key, "the first sync", statusIs(v1alpha1.SyncStatusCodeSynced, v1alpha1.HealthStatusHealthy))

			kubectlDrift(t, c, dest)
			app = waitApp(t, c, key, "OutOfSync after kubectl's changes", func(a *v1alpha1.Application) bool {
				return a.Status.Sync.Status == v1alpha1.SyncStatusCodeOutOfSync
			})
			wantReplicas := tc.sync(t, c, app, repo)
			app = waitApp(t, c, key, "the sync to end", func(a *v1alpha1.Application) bool {
				s := a.Status.OperationState
				return a.Operation == nil && s != nil && s.Phase != v1alpha1.OperationRunning &&
					(s.Phase != v1alpha1.OperationSucceeded || len(a.Status.History) == 2)
			})
			if s := app.Status.OperationState; s.Phase != v1alpha1.OperationSucceeded {
				t.Fatalf("the sync over kubectl's changes: %s: %s", s.Phase, s.Message)
			}
			waitApp(t, c, key, "Synced after the sync", statusIs(v1alpha1.SyncStatusCodeSynced, v1alpha1.HealthStatusHealthy))

			d := &appsv1.Deployment{}
			if err := c.Get(ctx, client.ObjectKey{Namespace: dest, Name: "guestbook-ui"}, d); err != nil {
				t.Fatal(err)
			}
			if *d.Spec.Replicas != wantReplicas || d.Spec.Template.Spec.Containers[0].Image != guestbookImage {
				t.Errorf("replicas %d, image %s; want git's %d and %s", *d.Spec.Replicas, d.Spec.Template.Spec.Containers[0].Image, wantReplicas, guestbookImage)
			}
			if d.Labels["oncall"] != "paged" {
				t.Errorf("the label only kubectl set is gone: %v", d.Labels)
			}
			// Through more than a poll the app must not flap.
			testwait.Consistently(t, "Synced after the sync", 4*time.Second, func() error {
				if err := c.Get(ctx, key, app); err != nil {
					return err
				}
				if app.Status.Sync.Status != v1alpha1.SyncStatusCodeSynced {
					return fmt.Errorf("the app is %s, want Synced; resources %+v", app.Status.Sync.Status, app.Status.Resources)
				}
				return nil
			})
		})
	}
}

// kubectlDrift changes guestbook-ui in ns with the requests kubectl sends:
// scale updates the scale subresource (manager kubectl); edit patches what
// was edited, here the image and a label git does not set (kubectl-edit).
func kubectlDrift(t *testing.T, c client.Client, ns string) {
	t.Helper()
	ctx := context.Background()
	deploy := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "guestbook-ui", Namespace: ns}}
	scale := &autoscalingv1.Scale{Spec: autoscalingv1.ScaleSpec{Replicas: 5}}
	if err := c.SubResource("scale").Update(ctx, deploy, client.WithSubResourceBody(scale), client.FieldOwner("kubectl")); err != nil {
		t.Fatalf("kubectl scale: %v", err)
	}
	edit := fmt.Sprintf(`{"metadata":{"labels":{"oncall":"paged"}},"spec":{"template":{"spec":{"containers":[{"name":"guestbook-ui","image":%q}]}}}}`, guestbookImage+"-hotfix")
	if err := c.Patch(ctx, deploy, client.RawPatch(types.StrategicMergePatchType, []byte(edit)), client.FieldOwner("kubectl-edit")); err != nil {
		t.Fatalf("kubectl edit: %v", err)
	}
}
