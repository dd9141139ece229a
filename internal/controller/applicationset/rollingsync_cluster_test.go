package applicationset

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/skiffcd/skiff/api/v1alpha1"
	"github.com/skiffcd/skiff/internal/testcluster"
	"github.com/skiffcd/skiff/internal/testgit"
	"github.com/skiffcd/skiff/internal/testwait"
)

// configMap is the manifest of a ConfigMap called name.
func configMap(t *testing.T, name string) string {
	t.Helper()
	m := testgit.Dir(t, "testdata/configs", "")["settings.yaml"]
	return strings.Replace(m, "name: settings", "name: "+name, 1)
}

// appStatus is the RollingSync status of app in set, or "".
func appStatus(set *v1alpha1.ApplicationSet, app string) string {
	for _, s := range set.Status.ApplicationStatus {
		if s.Application == app {
			return s.Status
		}
	}
	return ""
}

// A RollingSync of two steps syncs the second only once the first is
// Healthy: while dev cannot sync (its directory is not in git yet), prod
// waits unsynced; once dev is committed, synced and Healthy, prod syncs.
func TestRollingSyncTwoSteps(t *testing.T) {
	ctx := context.Background()
	ns, dest := cluster.Namespace(t), cluster.Namespace(t)
	repo := testgit.New(t)
	repo.Commit(map[string]string{"prod/cm.yaml": configMap(t, "prod-settings")})
	c := startController(t, ns)
	startAppController(t, ns)
	set := readSet(t, "rolling.yaml", ns)
	set.Spec.Template.Spec.Source.RepoURL = repo.URL()
	set.Spec.Template.Spec.Destination.Namespace = dest
	if err := c.Create(ctx, set); err != nil {
		t.Fatal(err)
	}
	apps := waitApps(t, c, ns, "both apps", func(a map[string]v1alpha1.Application) bool { return len(a) == 2 })
	for _, app := range apps {
		if app.IsAutomated() {
			t.Errorf("app %s keeps automated sync under a RollingSync", app.Name)
		}
	}
	got := waitSet(t, c, set, "dev Pending, prod Waiting", func(s *v1alpha1.ApplicationSet) bool {
		return appStatus(s, "envs-dev") == statusPending && appStatus(s, "envs-prod") == statusWaiting
	})
	if p := condition(got, v1alpha1.ApplicationSetConditionRolloutProgressing); p.Status != "True" || !strings.Contains(p.Message, "step 1") {
		t.Errorf("RolloutProgressing %+v", p)
	}
	prodKey := client.ObjectKey{Namespace: ns, Name: "envs-prod"}
	testwait.Consistently(t, "prod unsynced while dev cannot sync", 6*time.Second, func() error {
		prod := &v1alpha1.Application{}
		if err := c.Get(ctx, prodKey, prod); err != nil {
			return err
		}
		if prod.Operation != nil || prod.Status.OperationState != nil {
			return errors.New("prod was synced before dev was Healthy")
		}
		return nil
	}, testwait.Interval(200*time.Millisecond))

	repo.Commit(map[string]string{"dev/cm.yaml": configMap(t, "dev-settings")})
	got = waitSet(t, c, set, "the rollout complete", func(s *v1alpha1.ApplicationSet) bool {
		return appStatus(s, "envs-dev") == statusHealthy && appStatus(s, "envs-prod") == statusHealthy &&
			condition(s, v1alpha1.ApplicationSetConditionRolloutProgressing).Reason == ReasonRolloutComplete
	})
	apps = waitApps(t, c, ns, "apps read", func(map[string]v1alpha1.Application) bool { return true })
	dev, prod := apps["envs-dev"], apps["envs-prod"]
	for _, app := range []v1alpha1.Application{dev, prod} {
		s := app.Status.OperationState
		if s == nil || s.Phase != v1alpha1.OperationSucceeded || s.Operation.InitiatedBy.Username != rollingSyncInitiator || !s.Operation.InitiatedBy.Automated {
			t.Fatalf("app %s: operation %+v, want one the RollingSync started", app.Name, s)
		}
		if s.Operation.Sync == nil || !s.Operation.Sync.Prune {
			t.Errorf("app %s: sync %+v, want the template's prune", app.Name, s.Operation.Sync)
		}
	}
	if prod.Status.OperationState.StartedAt.Before(dev.Status.OperationState.FinishedAt) {
		t.Errorf("prod's sync began at %v, before dev's ended at %v", prod.Status.OperationState.StartedAt, dev.Status.OperationState.FinishedAt)
	}
	for _, name := range []string{"dev-settings", "prod-settings"} {
		if err := c.Get(ctx, client.ObjectKey{Namespace: dest, Name: name}, &corev1.ConfigMap{}); err != nil {
			t.Errorf("ConfigMap %s: %v", name, err)
		}
	}
	if got.Status.ResourcesCount != 2 || got.Status.Resources[0].Health == nil || got.Status.Resources[0].Health.Status != v1alpha1.HealthStatusHealthy {
		t.Errorf("status.resources %+v", got.Status.Resources)
	}
}

// With preserveResourcesOnDeletion the apps carry no resources finalizer:
// deleting the set deletes them and leaves what they deployed.
func TestPreserveResourcesOnDeletion(t *testing.T) {
	ctx := context.Background()
	ns, dest := cluster.Namespace(t), cluster.Namespace(t)
	repo := testgit.New(t)
	repo.Commit(map[string]string{"apps/one/cm.yaml": configMap(t, "kept")})
	c := startController(t, ns)
	startAppController(t, ns)
	set := readSet(t, "list.yaml", ns)
	elements(t, set, "name: one")
	set.Spec.SyncPolicy = &v1alpha1.ApplicationSetSyncPolicy{PreserveResourcesOnDeletion: true}
	set.Spec.Template.Spec.Source.RepoURL = repo.URL()
	set.Spec.Template.Spec.Source.TargetRevision = "HEAD"
	set.Spec.Template.Spec.Destination.Namespace = dest
	set.Spec.Template.Spec.SyncPolicy = &v1alpha1.SyncPolicy{Automated: &v1alpha1.SyncPolicyAutomated{}}
	if err := c.Create(ctx, set); err != nil {
		t.Fatal(err)
	}
	apps := waitApps(t, c, ns, "the app synced", func(a map[string]v1alpha1.Application) bool {
		return a["one"].Status.Sync.Status == v1alpha1.SyncStatusCodeSynced
	})
	one := apps["one"]
	if f := one.ResourcesFinalizer(); f != "" {
		t.Errorf("app one carries %s under preserveResourcesOnDeletion", f)
	}
	cm := &corev1.ConfigMap{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: dest, Name: "kept"}, cm); err != nil {
		t.Fatal(err)
	}
	if err := c.Delete(ctx, set); err != nil {
		t.Fatal(err)
	}
	testwait.Eventually(t, "the app deleted with its set", testcluster.Gone(c, &one), testwait.Timeout(60*time.Second))
	testwait.Consistently(t, "the ConfigMap kept", 3*time.Second, func() error {
		if err := c.Get(ctx, client.ObjectKeyFromObject(cm), cm); err != nil {
			return err
		}
		if cm.DeletionTimestamp != nil {
			return fmt.Errorf("ConfigMap being deleted")
		}
		return nil
	}, testwait.Interval(200*time.Millisecond))
}
