package clustercache

import (
	"context"
	"sync/atomic"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"

	"github.com/skiffcd/skiff/internal/testwait"
)

// A change of the rules (argocd-cm's health scripts) judges the cached
// objects of the kinds it names again: the tracked ones whose health moved
// are reported, untracked ones and other kinds are not judged.
func TestRejudgeReportsTheTrackedObjectsWhoseHealthTheNewRulesChange(t *testing.T) {
	ctx := context.Background()
	var rules atomic.Value
	rules.Store("Healthy")
	c, events := startCacheWith(t, Options{Health: func(*unstructured.Unstructured) string { return rules.Load().(string) }})
	ns := cluster.Namespace(t)
	client := kubernetes.NewForConfigOrDie(cluster.Config).CoreV1().ConfigMaps(ns)
	for _, cm := range []*corev1.ConfigMap{
		{ObjectMeta: metav1.ObjectMeta{Name: "tracked", Namespace: ns,
			Annotations: map[string]string{TrackingAnnotation: "shop:/ConfigMap:" + ns + "/tracked"}}},
		{ObjectMeta: metav1.ObjectMeta{Name: "untracked", Namespace: ns}},
	} {
		if _, err := client.Create(ctx, cm, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	testwait.Eventually(t, "the tracked ConfigMap to be cached whole", func() bool {
		obj, ok := c.Get(ResourceKey{Kind: "ConfigMap", Namespace: ns, Name: "tracked"})
		return ok && c.watchesWhole(schema.GroupKind{Kind: "ConfigMap"}) && obj.GetAnnotations()[TrackingAnnotation] != ""
	})
	healthChanged := func(e Event) bool { return e.HealthChanged && e.Key.Namespace == ns }
	configMaps := func(gk schema.GroupKind) bool { return gk == schema.GroupKind{Kind: "ConfigMap"} }

	rules.Store("Degraded")
	c.Rejudge(func(schema.GroupKind) bool { return false })
	if events.has(healthChanged) {
		t.Fatalf("a rejudge of no kind reported %+v", events.matching(healthChanged))
	}
	c.Rejudge(configMaps)
	if got := events.matching(healthChanged); len(got) != 1 || got[0].App != "shop" || got[0].Key.Name != "tracked" {
		t.Fatalf("rejudging ConfigMaps reported %+v, want the tracked one's health change", got)
	}
	c.Rejudge(configMaps)
	if n := events.count(healthChanged); n != 1 {
		t.Fatalf("rejudging under the same rules reported %d changes in all, want still 1", n)
	}
}
