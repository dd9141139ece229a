package clustercache

import (
	"context"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"

	"github.com/skiffcd/skiff/internal/testwait"
)

// An update that changes how Options.Health judges a tracked object is
// reported as such; other updates, and changes of untracked objects, are
// not. The judge here reads a label, so the test moves health at will.
func TestUpdatesThatChangeATrackedObjectsHealthAreReported(t *testing.T) {
	ctx := context.Background()
	c, events := startCacheWith(t, Options{Health: func(u *unstructured.Unstructured) string { return u.GetLabels()["health"] }})
	ns := cluster.Namespace(t)
	client := kubernetes.NewForConfigOrDie(cluster.Config).CoreV1().ConfigMaps(ns)
	tracked := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "settings", Namespace: ns,
		Labels:      map[string]string{"health": "Progressing"},
		Annotations: map[string]string{TrackingAnnotation: "shop:/ConfigMap:" + ns + "/settings"}}}
	untracked := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "other", Namespace: ns,
		Labels: map[string]string{"health": "Progressing"}}}
	for _, cm := range []*corev1.ConfigMap{tracked, untracked} {
		if _, err := client.Create(ctx, cm, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	healthChanged := func(e Event) bool { return e.HealthChanged }
	update := func(name string, edit func(*corev1.ConfigMap)) {
		t.Helper()
		updateConfigMap(t, c, ns, name, edit)
	}

	// Until then a metadata-only copy (untracked, unjudged) can come in
	// between two whole ones.
	testwait.Eventually(t, "ConfigMaps to be watched whole", func() bool { return c.watchesWhole(schema.GroupKind{Kind: "ConfigMap"}) })
	update("settings", func(cm *corev1.ConfigMap) { cm.Data = map[string]string{"k": "v"} })
	if events.has(healthChanged) {
		t.Fatalf("a data change was reported as a health change: %+v", events.matching(healthChanged))
	}
	update("other", func(cm *corev1.ConfigMap) { cm.Labels["health"] = "Healthy" })
	update("settings", func(cm *corev1.ConfigMap) { cm.Labels["health"] = "Healthy" })
	testwait.Eventually(t, "the health change to be reported", func() bool { return events.has(healthChanged) })
	if n := events.count(healthChanged); n != 1 || !events.has(func(e Event) bool {
		return e.HealthChanged && e.App == "shop" && e.Key.Name == "settings" && e.Key.Namespace == ns
	}) {
		t.Errorf("health changes reported %+v; want one, the tracked ConfigMap's label change", events.matching(healthChanged))
	}
}

// An update that keeps a tracked object's fingerprint, app and health (one
// that changes only fields argocd-cm's ignoreResourceUpdates names) is
// stored without a word to subscribers, whose words queue the app's
// comparisons; other updates are told. The fingerprint here is the data
// alone, so the test's label changes are the ignored fields.
func TestUpdatesThatKeepATrackedObjectsFingerprintAreNotTold(t *testing.T) {
	ctx := context.Background()
	c, events := startCacheWith(t, Options{
		Health:      func(u *unstructured.Unstructured) string { return u.GetLabels()["health"] },
		Fingerprint: func(u *unstructured.Unstructured) string { return fmt.Sprint(u.Object["data"]) },
	})
	ns := cluster.Namespace(t)
	client := kubernetes.NewForConfigOrDie(cluster.Config).CoreV1().ConfigMaps(ns)
	tracked := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "settings", Namespace: ns,
		Labels:      map[string]string{"health": "Healthy", "noise": "0"},
		Annotations: map[string]string{TrackingAnnotation: "shop:/ConfigMap:" + ns + "/settings"}},
		Data: map[string]string{"k": "a"}}
	if _, err := client.Create(ctx, tracked, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	testwait.Eventually(t, "ConfigMaps to be watched whole", func() bool { return c.watchesWhole(schema.GroupKind{Kind: "ConfigMap"}) })
	key := ResourceKey{Kind: "ConfigMap", Namespace: ns, Name: "settings"}
	update := func(edit func(*corev1.ConfigMap)) {
		t.Helper()
		updateConfigMap(t, c, ns, "settings", edit)
	}
	ofSettings := func(e Event) bool { return e.Key == key && e.App == "shop" }
	healthOfSettings := func(e Event) bool { return ofSettings(e) && e.HealthChanged }
	// Events of one object come in order: once a health change is told,
	// every event of the updates before it has been.
	healthTold := func(n int) {
		t.Helper()
		testwait.Eventually(t, "the health change to be told", func() bool { return events.count(healthOfSettings) == n })
	}
	update(func(cm *corev1.ConfigMap) { cm.Labels["health"] = "Progressing" })
	healthTold(1)
	before := events.count(ofSettings)

	update(func(cm *corev1.ConfigMap) { cm.Labels["noise"] = "1" })
	if got, _ := c.Get(key); got.GetLabels()["noise"] != "1" {
		t.Fatalf("the cache holds noise %q, want the ignored update stored all the same", got.GetLabels()["noise"])
	}
	update(func(cm *corev1.ConfigMap) { cm.Labels["noise"], cm.Labels["health"] = "2", "Degraded" })
	healthTold(2)
	if n := events.count(ofSettings) - before; n != 1 {
		t.Fatalf("%d events for an update of ignored fields and one that moved health; want one, the health change's: %+v", n, events.matching(ofSettings))
	}
	update(func(cm *corev1.ConfigMap) { cm.Data["k"] = "b" })
	testwait.Eventually(t, "the update of a watched field to be told", func() bool { return events.count(ofSettings)-before == 2 })
}

// updateConfigMap edits the ConfigMap ns/name in the cluster and waits
// until c holds the update.
func updateConfigMap(t *testing.T, c *Cache, ns, name string, edit func(*corev1.ConfigMap)) {
	t.Helper()
	ctx := context.Background()
	client := kubernetes.NewForConfigOrDie(cluster.Config).CoreV1().ConfigMaps(ns)
	cm, err := client.Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	edit(cm)
	updated, err := client.Update(ctx, cm, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	testwait.Eventually(t, "the cache to hold "+name+" as updated", func() bool {
		got, ok := c.Get(ResourceKey{Kind: "ConfigMap", Namespace: ns, Name: name})
		return ok && got.GetResourceVersion() == updated.ResourceVersion
	})
}
