package clustercache

import (
	"context"
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
