package application

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/skiffcd/skiff/api/v1alpha1"
	"github.com/skiffcd/skiff/internal/argocdcm"
	"github.com/skiffcd/skiff/internal/clustercache"
	"github.com/skiffcd/skiff/internal/testgit"
	"github.com/skiffcd/skiff/internal/testwait"
)

// startSettings follows argocd-cm in ns as skiff server does, until the
// test ends.
func startSettings(t *testing.T, ns string) *argocdcm.Source {
	t.Helper()
	informers, err := cache.New(cluster.Config, cache.Options{DefaultNamespaces: map[string]cache.Config{ns: {}}})
	if err != nil {
		t.Fatal(err)
	}
	src := argocdcm.NewSource(informers)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go func() { _ = informers.Start(ctx) }()
	go func() { _ = src.Start(ctx) }()
	return src
}

// Switching argocd-cm from annotation to label tracking keeps a synced app
// Synced with nothing pruned; its next sync writes the label, and a prune
// after it still finds what git no longer has.
func TestSwitchingToLabelTrackingKeepsAppsSynced(t *testing.T) {
	ctx := context.Background()
	argocd, dest := cluster.Namespace(t), cluster.Namespace(t)
	settings := startSettings(t, argocd)
	c, _ := startReconciler(t, argocd, 3*time.Second, func(r *Reconciler) { r.Settings = settings })
	repo := testgit.New(t)
	sha := repo.Commit(testgit.Dir(t, "testdata/tracking", "app"))
	app := newApp(argocd, "tracked", repo.URL(), "app", dest, nil)
	if err := c.Create(ctx, app); err != nil {
		t.Fatal(err)
	}
	key := client.ObjectKeyFromObject(app)
	synced := func(a *v1alpha1.Application) bool {
		return a.Status.Sync.Status == v1alpha1.SyncStatusCodeSynced && a.Operation == nil &&
			a.Status.OperationState != nil && a.Status.OperationState.Phase == v1alpha1.OperationSucceeded
	}
	requestSync(t, c, app, v1alpha1.SyncOperation{Revision: sha})
	app = waitApp(t, c, key, "the first sync", synced)

	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: argocdcm.ConfigMapName, Namespace: argocd},
		Data: map[string]string{"application.resourceTrackingMethod": "label"}}
	if err := c.Create(ctx, cm); err != nil {
		t.Fatal(err)
	}
	testwait.Eventually(t, "argocd-cm's label tracking to apply", func() bool {
		return trackingOf(settings.Current()).Mode == clustercache.TrackingLabelMode
	})
	// A refresh compares under label tracking: the objects, written under
	// annotation tracking, are still the app's.
	patch := client.MergeFrom(app.DeepCopy())
	app.Annotations = map[string]string{v1alpha1.AnnotationRefresh: v1alpha1.RefreshNormal}
	if err := c.Patch(ctx, app, patch); err != nil {
		t.Fatal(err)
	}
	app = waitApp(t, c, key, "a comparison under label tracking", func(a *v1alpha1.Application) bool {
		return a.Annotations[v1alpha1.AnnotationRefresh] == "" && a.Status.Sync.Status == v1alpha1.SyncStatusCodeSynced
	})
	if len(app.Status.Resources) != 3 {
		t.Errorf("resources after the switch: %+v, want the three ConfigMaps", app.Status.Resources)
	}
	for _, name := range []string{"settings", "extra", "later"} {
		if !configMapExists(t, c, dest, name) {
			t.Errorf("ConfigMap %s is gone after the switch", name)
		}
	}

	// The first sync after the switch prunes an object written under
	// annotation tracking, and labels the others.
	sha = repo.Commit(map[string]string{"app/extra.yaml": ""})
	requestSync(t, c, app, v1alpha1.SyncOperation{Revision: sha, Prune: true})
	app = waitApp(t, c, key, "the first prune under label tracking", func(a *v1alpha1.Application) bool {
		return synced(a) && a.Status.Sync.Revision == sha && !configMapExists(t, c, dest, "extra")
	})
	live := &corev1.ConfigMap{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: dest, Name: "later"}, live); err != nil {
		t.Fatal(err)
	}
	if live.Labels[clustercache.InstanceLabel] != "tracked" || live.Annotations[clustercache.TrackingAnnotation] != "" {
		t.Errorf("after a sync under label tracking: labels %v, annotations %v; want the instance label alone", live.Labels, live.Annotations)
	}

	// A later prune finds by the label what git no longer has.
	sha = repo.Commit(map[string]string{"app/later.yaml": ""})
	requestSync(t, c, app, v1alpha1.SyncOperation{Revision: sha, Prune: true})
	waitApp(t, c, key, "the prune of a labelled object", func(a *v1alpha1.Application) bool {
		return synced(a) && a.Status.Sync.Revision == sha && !configMapExists(t, c, dest, "later")
	})
	if !configMapExists(t, c, dest, "settings") {
		t.Error("a prune took the ConfigMap git still has")
	}
}

// argocd-cm's timeout.reconciliation, not the controller's own period,
// says how often apps ask git for new commits.
func TestReconciliationTimeoutFromArgocdCM(t *testing.T) {
	ctx := context.Background()
	argocd, dest := cluster.Namespace(t), cluster.Namespace(t)
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: argocdcm.ConfigMapName, Namespace: argocd},
		Data: map[string]string{"timeout.reconciliation": "2s"}}
	if err := cluster.Client(t).Create(ctx, cm); err != nil {
		t.Fatal(err)
	}
	settings := startSettings(t, argocd)
	testwait.Eventually(t, "argocd-cm's timeout to apply", func() bool {
		d := settings.Current().Application.Reconciliation
		return d != nil && *d == 2*time.Second
	})
	c, _ := startReconciler(t, argocd, 10*time.Minute, func(r *Reconciler) { r.Settings = settings })
	repo := testgit.New(t)
	repo.Commit(testgit.Dir(t, "testdata/tracking", "app"))
	app := newApp(argocd, "polled", repo.URL(), "app", dest, nil)
	if err := c.Create(ctx, app); err != nil {
		t.Fatal(err)
	}
	key := client.ObjectKeyFromObject(app)
	waitApp(t, c, key, "the first comparison", func(a *v1alpha1.Application) bool { return a.Status.Sync.Revision != "" })
	sha := repo.Commit(map[string]string{"app/extra.yaml": ""})
	waitApp(t, c, key, "a poll within seconds to see the commit", func(a *v1alpha1.Application) bool { return a.Status.Sync.Revision == sha })
}
