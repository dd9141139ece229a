package application

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/skiffcd/skiff/api/v1alpha1"
	"github.com/skiffcd/skiff/internal/clustercache"
	"github.com/skiffcd/skiff/internal/testgit"
	"github.com/skiffcd/skiff/internal/testwait"
)

// A kind argocd-cm's resource.exclusions names leaves the watch cache and
// every app, live: the app warns that its object is excluded and stays
// Synced, the object is not pruned, and it comes back once the exclusion
// is lifted.
func TestArgoCDConfigMapExclusionsRemoveAKindFromTheCacheAndApps(t *testing.T) {
	ctx := context.Background()
	installGateCRD(t)
	argocd, dest := cluster.Namespace(t), cluster.Namespace(t)
	settings := followSettings(t, argocd)
	c, r, _ := startReconcilerWithSettings(t, argocd, 2*time.Second, settings)
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "argocd-cm", Namespace: argocd}, Data: map[string]string{}}
	if err := c.Create(ctx, cm); err != nil {
		t.Fatal(err)
	}

	repo := testgit.New(t)
	repo.Commit(testgit.Dir(t, "testdata/exclusions/app", "app"))
	app := newApp(argocd, "excluding", repo.URL(), "app", dest, nil)
	app.Operation = &v1alpha1.Operation{Sync: &v1alpha1.SyncOperation{Prune: true}, InitiatedBy: v1alpha1.OperationInitiator{Username: "test"}}
	if err := c.Create(ctx, app); err != nil {
		t.Fatal(err)
	}
	key := client.ObjectKeyFromObject(app)
	gateKey := clustercache.ResourceKey{Group: gateKind.Group, Kind: gateKind.Kind, Namespace: dest, Name: "gate"}
	listed := func(a *v1alpha1.Application) bool {
		for _, res := range a.Status.Resources {
			if res.Kind == gateKind.Kind {
				return true
			}
		}
		return false
	}
	waitApp(t, c, key, "synced with its gate", func(a *v1alpha1.Application) bool {
		return a.Status.Sync.Status == v1alpha1.SyncStatusCodeSynced && listed(a)
	})
	if _, cached := r.Cache.Get(gateKey); !cached {
		t.Fatalf("the gate is not in the cache before the exclusion")
	}

	cm.Data = map[string]string{"resource.exclusions": "- apiGroups: [health.skiff.test]\n  kinds: [Gate]\n"}
	if err := c.Update(ctx, cm); err != nil {
		t.Fatal(err)
	}
	testwait.Eventually(t, "the cache to stop watching gates", func() bool {
		_, cached := r.Cache.Get(gateKey)
		return !cached && !r.Cache.Watches(gateKind)
	})
	waitApp(t, c, key, "the gate out of the app, with a warning", func(a *v1alpha1.Application) bool {
		return !listed(a) && a.Status.Sync.Status == v1alpha1.SyncStatusCodeSynced &&
			conditionMessage(a, v1alpha1.ApplicationConditionExcludedResourceWarning) == "Resource health.skiff.test/Gate gate is excluded in the settings"
	})
	// A sync neither applies nor prunes it.
	if err := c.Get(ctx, key, app); err != nil {
		t.Fatal(err)
	}
	app.Operation = &v1alpha1.Operation{Sync: &v1alpha1.SyncOperation{Prune: true}, InitiatedBy: v1alpha1.OperationInitiator{Username: "test"}}
	if err := c.Update(ctx, app); err != nil {
		t.Fatal(err)
	}
	waitApp(t, c, key, "a sync to succeed", func(a *v1alpha1.Application) bool {
		return a.Operation == nil && len(a.Status.History) == 2 && a.Status.OperationState != nil &&
			a.Status.OperationState.Phase == v1alpha1.OperationSucceeded
	})
	gate := &unstructured.Unstructured{}
	gate.SetGroupVersionKind(gateKind.WithVersion("v1"))
	if err := c.Get(ctx, client.ObjectKey{Namespace: dest, Name: "gate"}, gate); err != nil || gate.GetDeletionTimestamp() != nil {
		t.Fatalf("the excluded gate is gone after a sync with prune: %v", err)
	}

	delete(cm.Data, "resource.exclusions")
	if err := c.Update(ctx, cm); err != nil {
		t.Fatal(err)
	}
	waitApp(t, c, key, "the gate back in the app once the exclusion is lifted", func(a *v1alpha1.Application) bool {
		_, cached := r.Cache.Get(gateKey)
		return cached && listed(a) && conditionMessage(a, v1alpha1.ApplicationConditionExcludedResourceWarning) == ""
	})
}
