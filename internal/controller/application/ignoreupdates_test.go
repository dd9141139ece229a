package application

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/skiffcd/skiff/api/v1alpha1"
	"github.com/skiffcd/skiff/internal/clustercache"
	"github.com/skiffcd/skiff/internal/testgit"
	"github.com/skiffcd/skiff/internal/testwait"
)

// An update of a field argocd-cm's ignoreResourceUpdates names, which
// leaves the object's health alone, asks for no comparison of its app: the
// controller's cache tells the controller (liveChange) nothing of it. An
// update of another field is told, and the app is compared.
func TestIgnoredResourceUpdatesQueueNoComparison(t *testing.T) {
	ctx := context.Background()
	argocd, dest := cluster.Namespace(t), cluster.Namespace(t)
	settings := followSettings(t, argocd)
	c, r, _ := startReconcilerWithSettings(t, argocd, time.Hour, settings)
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "argocd-cm", Namespace: argocd}, Data: map[string]string{
		"resource.customizations.ignoreResourceUpdates.ConfigMap": "jqPathExpressions: ['.metadata.annotations.heartbeat']\n",
	}}
	if err := c.Create(ctx, cm); err != nil {
		t.Fatal(err)
	}
	testwait.Eventually(t, "argocd-cm's ignoreResourceUpdates to be read", func() bool {
		return len(settings.Current().Resource.UpdateRules(schema.GroupKind{Kind: "ConfigMap"})) > 0 &&
			len(settings.Current().Resource.UpdateRules(schema.GroupKind{Group: "apps", Kind: "Deployment"})) == 0
	})

	repo := testgit.New(t)
	repo.Commit(map[string]string{"app/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: beating}\ndata: {kept: a}\n"})
	app := newApp(argocd, "beating", repo.URL(), "app", dest, nil)
	app.Operation = &v1alpha1.Operation{Sync: &v1alpha1.SyncOperation{}, InitiatedBy: v1alpha1.OperationInitiator{Username: "test"}}
	if err := c.Create(ctx, app); err != nil {
		t.Fatal(err)
	}
	key := client.ObjectKeyFromObject(app)
	waitApp(t, c, key, "synced, the sync over", func(a *v1alpha1.Application) bool {
		return statusIs(v1alpha1.SyncStatusCodeSynced, v1alpha1.HealthStatusHealthy)(a) && a.Operation == nil &&
			a.Status.OperationState != nil && a.Status.OperationState.Phase == v1alpha1.OperationSucceeded
	})

	// The cache first watches ConfigMaps by metadata only: the whole copy
	// that follows is a change its app hears of.
	testwait.Eventually(t, "the cache to hold the ConfigMap whole", func() bool {
		return len(r.Cache.AppObjects(app.Name)) == 1
	})
	// What liveChange hears of the app from now on.
	var mu sync.Mutex
	var told []string
	r.Cache.Subscribe(func(e clustercache.Event) {
		if e.App == app.Name {
			mu.Lock()
			defer mu.Unlock()
			told = append(told, fmt.Sprintf("%s %+v", time.Now().Format("15:04:05.000"), e))
		}
	})
	base := 0
	toldSoFar := func() []string {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(told[base:])
	}
	// The whole copy's event may trail it by a moment.
	testwait.Eventually(t, "the cache's events of the sync to pass", func() error {
		mu.Lock()
		defer mu.Unlock()
		if len(told) != base {
			base = len(told)
			return fmt.Errorf("%d events so far", base)
		}
		return nil
	}, testwait.Interval(time.Second))
	patch := func(p string) {
		t.Helper()
		live := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "beating", Namespace: dest}}
		if err := c.Patch(ctx, live, client.RawPatch(types.MergePatchType, []byte(p))); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 3 {
		patch(fmt.Sprintf(`{"metadata":{"annotations":{"heartbeat":"%d"}}}`, i))
	}
	// The cache hears of each patch well within ten coalescing delays.
	time.Sleep(10 * liveChangeCoalescing)
	if got := toldSoFar(); len(got) != 0 {
		t.Fatalf("updates of an ignored annotation were told: %v", got)
	}
	patch(`{"data":{"kept":"changed"}}`)
	waitApp(t, c, key, "OutOfSync after an update of a compared field", func(a *v1alpha1.Application) bool {
		return a.Status.Sync.Status == v1alpha1.SyncStatusCodeOutOfSync
	})
	if got := toldSoFar(); len(got) != 1 {
		t.Fatalf("an update of a compared field was told %d times, want once: %v", len(got), got)
	}
}
