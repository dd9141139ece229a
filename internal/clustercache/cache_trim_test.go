package clustercache

import (
	"context"
	"reflect"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/skiffcd/skiff/internal/diff"
	"github.com/skiffcd/skiff/internal/testwait"
)

// The cache stores a tracked object without the managedFields its readers
// never use, and an untracked one as its metadata; GetFull reads the
// untracked one whole.
func TestCacheStoresObjectsWithoutUnneededManagedFields(t *testing.T) {
	ctx := context.Background()
	c, _ := startCache(t)
	ns := cluster.Namespace(t)
	cms := dynamic.NewForConfigOrDie(cluster.Config).Resource(schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}).Namespace(ns)
	apply := func(manager, name string, annotations map[string]any, data map[string]any) {
		t.Helper()
		cm := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": name, "namespace": ns, "annotations": annotations},
			"data":     data,
		}}
		if _, err := cms.Apply(ctx, name, cm, metav1.ApplyOptions{FieldManager: manager}); err != nil {
			t.Fatal(err)
		}
	}

	apply("other-tool", "untracked", map[string]any{"team": "web"}, map[string]any{"a": "1"})
	trackedBy := map[string]any{TrackingAnnotation: "shop:/ConfigMap:" + ns + "/tracked"}
	apply("other-tool", "tracked", trackedBy, map[string]any{"a": "1"})
	apply(diff.FieldManager, "tracked", trackedBy, map[string]any{"b": "2"})

	var untracked *unstructured.Unstructured
	testwait.Eventually(t, "the untracked ConfigMap to be cached", func() bool {
		var ok bool
		untracked, ok = c.Get(ResourceKey{Kind: "ConfigMap", Namespace: ns, Name: "untracked"})
		return ok
	})
	if mf := untracked.GetManagedFields(); len(mf) != 0 {
		t.Errorf("the untracked ConfigMap applied by another manager keeps %d managedFields entries, want none", len(mf))
	}
	if _, found := untracked.Object["data"]; found {
		t.Errorf("the untracked ConfigMap is cached with its data; want its metadata only")
	}
	whole, ok, err := c.GetFull(ctx, ResourceKey{Kind: "ConfigMap", Namespace: ns, Name: "untracked"})
	if err != nil || !ok {
		t.Fatalf("GetFull of the untracked ConfigMap: found %v, %v", ok, err)
	}
	if data, _, _ := unstructured.NestedStringMap(whole.Object, "data"); !reflect.DeepEqual(data, map[string]string{"a": "1"}) {
		t.Errorf("GetFull's ConfigMap data = %v, want a=1", data)
	}
	if _, ok, err := c.GetFull(ctx, ResourceKey{Kind: "ConfigMap", Namespace: ns, Name: "never-created"}); ok || err != nil {
		t.Errorf("GetFull of a missing object: found %v, %v; want not found, no error", ok, err)
	}
	if untracked.GetAnnotations()["team"] != "web" || untracked.GetUID() == "" || untracked.GetResourceVersion() == "" {
		t.Errorf("the cached ConfigMap lost metadata: %v", untracked.Object["metadata"])
	}

	testwait.Eventually(t, "the tracked ConfigMap to be cached with Skiff's apply", func() bool {
		obj, ok := c.Get(ResourceKey{Kind: "ConfigMap", Namespace: ns, Name: "tracked"})
		if !ok {
			return false
		}
		data, _, _ := unstructured.NestedStringMap(obj.Object, "data")
		return reflect.DeepEqual(data, map[string]string{"a": "1", "b": "2"})
	})
	tracked, _ := c.Get(ResourceKey{Kind: "ConfigMap", Namespace: ns, Name: "tracked"})
	if got := managerNames(tracked); !reflect.DeepEqual(got, []string{"other-tool"}) {
		t.Errorf("the tracked ConfigMap's managers = %v, want [other-tool] (Skiff's own entry dropped)", got)
	}
}
