package clustercache

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/skiffcd/skiff/internal/testwait"
)

// A switch of the tracking method judges every held object again: under
// label tracking an object that carries only the instance label becomes
// its app's, whole (it was held as metadata), one tracked by the
// annotation stays its app's, and the app is told; back under annotation
// tracking the label alone tracks nothing.
func TestSetTrackingJudgesHeldObjectsAgain(t *testing.T) {
	ctx := context.Background()
	c, events := startCache(t)
	ns := cluster.Namespace(t)
	client := kubernetes.NewForConfigOrDie(cluster.Config)
	for _, cm := range []*corev1.ConfigMap{
		{ObjectMeta: metav1.ObjectMeta{Name: "annotated", Namespace: ns,
			Annotations: map[string]string{TrackingAnnotation: "shop:/ConfigMap:" + ns + "/annotated"}}, Data: map[string]string{"a": "1"}},
		{ObjectMeta: metav1.ObjectMeta{Name: "labelled", Namespace: ns,
			Labels: map[string]string{"example.com/app": "shop"}}, Data: map[string]string{"b": "2"}},
	} {
		if _, err := client.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	names := func() map[string]bool {
		out := map[string]bool{}
		for _, o := range c.AppObjects("shop") {
			if o.GetNamespace() == ns {
				out[o.GetName()] = true
			}
		}
		return out
	}
	// Both are held (the labelled one untracked) before the switch: the
	// switch judges again what the cache holds.
	testwait.Eventually(t, "the annotated ConfigMap alone to be the app's, the labelled one held", func() bool {
		got := names()
		_, held := c.Get(ResourceKey{Kind: "ConfigMap", Namespace: ns, Name: "labelled"})
		return got["annotated"] && !got["labelled"] && held
	})

	c.SetTracking(ctx, Tracking{Mode: TrackingLabelMode, LabelKey: "example.com/app"})
	if got := names(); !got["annotated"] || !got["labelled"] {
		t.Fatalf("after the switch to label tracking the app holds %v, want both ConfigMaps", got)
	}
	whole, _ := c.Get(ResourceKey{Kind: "ConfigMap", Namespace: ns, Name: "labelled"})
	if whole.Object["data"] == nil {
		t.Error("the newly tracked ConfigMap is held without its body")
	}
	if !events.has(func(e Event) bool { return e.App == "shop" && e.Key.Name == "labelled" }) {
		t.Error("the app was not told of the object it gained")
	}

	c.SetTracking(ctx, DefaultTracking())
	if got := names(); !got["annotated"] || got["labelled"] {
		t.Errorf("back under annotation tracking the app holds %v, want the annotated ConfigMap alone", got)
	}
}
