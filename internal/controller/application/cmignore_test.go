package application

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/skiffcd/skiff/api/v1alpha1"
	"github.com/skiffcd/skiff/internal/testgit"
	"github.com/skiffcd/skiff/internal/testwait"
)

// argocd-cm's ignoreDifferences apply to every app: a ConfigMap field it
// ignores drifts and the app stays Synced; a field it does not ignore
// drifts and the app is OutOfSync.
func TestArgoCDConfigMapIgnoreDifferencesKeepAppsSynced(t *testing.T) {
	ctx := context.Background()
	argocd, dest := cluster.Namespace(t), cluster.Namespace(t)
	settings := followSettings(t, argocd)
	c, _, _ := startReconcilerWithSettings(t, argocd, 2*time.Second, settings)
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "argocd-cm", Namespace: argocd}, Data: map[string]string{
		"resource.customizations.ignoreDifferences.ConfigMap": "jqPathExpressions: ['.data.drifting']\n",
	}}
	if err := c.Create(ctx, cm); err != nil {
		t.Fatal(err)
	}
	testwait.Eventually(t, "argocd-cm's ignoreDifferences to be read", func() bool { return len(settings.Current().Resource.IgnoreRules()) > 1 })

	repo := testgit.New(t)
	repo.Commit(map[string]string{"app/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: drift}\ndata: {drifting: a, kept: a}\n"})
	app := newApp(argocd, "ignoring", repo.URL(), "app", dest, nil)
	app.Operation = &v1alpha1.Operation{Sync: &v1alpha1.SyncOperation{}, InitiatedBy: v1alpha1.OperationInitiator{Username: "test"}}
	if err := c.Create(ctx, app); err != nil {
		t.Fatal(err)
	}
	key := client.ObjectKeyFromObject(app)
	waitApp(t, c, key, "synced", statusIs(v1alpha1.SyncStatusCodeSynced, v1alpha1.HealthStatusHealthy))

	drift := func(field string) {
		t.Helper()
		live := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "drift", Namespace: dest}}
		patch := []byte(`{"data":{"` + field + `":"changed"}}`)
		if err := c.Patch(ctx, live, client.RawPatch(types.MergePatchType, patch)); err != nil {
			t.Fatal(err)
		}
	}
	drift("drifting")
	// Comparisons run every 2 s and at once on a live change: three
	// rounds at least.
	time.Sleep(6 * time.Second)
	if err := c.Get(ctx, key, app); err != nil {
		t.Fatal(err)
	}
	if app.Status.Sync.Status != v1alpha1.SyncStatusCodeSynced {
		t.Fatalf("after a drift of an ignored field the app is %s, want Synced", app.Status.Sync.Status)
	}
	drift("kept")
	waitApp(t, c, key, "OutOfSync after a drift of a compared field", func(a *v1alpha1.Application) bool {
		return a.Status.Sync.Status == v1alpha1.SyncStatusCodeOutOfSync
	})
}
