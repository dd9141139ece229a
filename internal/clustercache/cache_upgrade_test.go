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

// watchesWhole reports whether kind gk is watched whole rather than as
// metadata only.
func (c *Cache) watchesWhole(gk schema.GroupKind) bool {
	c.mu.RLock()
	defer c.mu.RUnlock()
	for _, w := range c.watched {
		if w.gvk.GroupKind() == gk {
			return w.full
		}
	}
	return false
}

var podTemplateKind = schema.GroupKind{Kind: "PodTemplate"}

// A kind is watched as metadata until one of its objects is tracked; from
// then on its tracked objects are cached whole, and a cache started later
// has them whole as soon as Start returns. PodTemplates are used because no
// other test tracks one.
func TestCacheWatchesAKindWholeOnceAnObjectOfItIsTracked(t *testing.T) {
	ctx := context.Background()
	c, events := startCache(t)
	if c.watchesWhole(podTemplateKind) {
		t.Fatal("PodTemplates are watched whole before any is tracked")
	}
	if !c.Watches(podTemplateKind) {
		t.Fatal("PodTemplates are not watched at all")
	}
	ns := cluster.Namespace(t)
	templates := kubernetes.NewForConfigOrDie(cluster.Config).CoreV1().PodTemplates(ns)
	pt := &corev1.PodTemplate{
		ObjectMeta: metav1.ObjectMeta{Name: "worker", Namespace: ns},
		Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
			Containers: []corev1.Container{{Name: "worker", Image: "busybox:1.36"}},
		}},
	}
	created, err := templates.Create(ctx, pt, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	key := ResourceKey{Kind: "PodTemplate", Namespace: ns, Name: "worker"}
	testwait.Eventually(t, "the untracked PodTemplate to be cached", func() bool {
		_, ok := c.Get(key)
		return ok
	})
	if c.watchesWhole(podTemplateKind) {
		t.Error("an untracked PodTemplate made the kind watched whole")
	}

	created.Annotations = map[string]string{TrackingAnnotation: "batch:/PodTemplate:" + ns + "/worker"}
	if _, err := templates.Update(ctx, created, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	testwait.Eventually(t, "the tracked PodTemplate to be cached whole under its app", func() bool {
		objs := c.AppObjects("batch")
		return len(objs) == 1 && imageOf(objs[0]) == "busybox:1.36"
	})
	testwait.Eventually(t, "PodTemplates to be watched whole after one was tracked", func() bool {
		return c.watchesWhole(podTemplateKind)
	})
	if !events.has(func(e Event) bool { return e.App == "batch" && e.Key == key }) {
		t.Error("the app heard nothing of its PodTemplate")
	}

	later, _ := startCache(t)
	if !later.watchesWhole(podTemplateKind) {
		t.Error("a cache started with a tracked PodTemplate in the cluster watches the kind as metadata")
	}
	if objs := later.AppObjects("batch"); len(objs) != 1 || imageOf(objs[0]) != "busybox:1.36" {
		t.Errorf("right after Start, the app's objects are %d, want its PodTemplate whole", len(objs))
	}
}

func imageOf(u *unstructured.Unstructured) string {
	containers, _, _ := unstructured.NestedSlice(u.Object, "template", "spec", "containers")
	if len(containers) == 0 {
		return ""
	}
	image, _, _ := unstructured.NestedString(containers[0].(map[string]any), "image")
	return image
}
