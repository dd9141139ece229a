package clustercache

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Versions stands for what a comparison of an app reads from the cache:
// any change to the app's objects, or to the untracked objects it asks
// about, gives another digest; changes elsewhere do not.
func TestVersionsChangeWithTheObjectsAComparisonReads(t *testing.T) {
	configMap := func(name, rv, app string) *unstructured.Unstructured {
		var ann map[string]string
		if app != "" {
			ann = map[string]string{TrackingAnnotation: app + ":/ConfigMap:web/" + name}
		}
		u := object("v1", "ConfigMap", "web", name, ann, nil)
		u.SetResourceVersion(rv)
		return u
	}
	gvk := schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}
	key := func(name string) ResourceKey { return ResourceKey{Kind: "ConfigMap", Namespace: "web", Name: name} }
	// The app "shop" tracks a and b and asks about c, untracked; d is
	// untracked and e is another app's.
	base := []*unstructured.Unstructured{
		configMap("a", "1", "shop"), configMap("b", "2", "shop"), configMap("c", "3", ""),
		configMap("d", "4", ""), configMap("e", "5", "blog"),
	}
	asked := []ResourceKey{key("a"), key("b"), key("c")}
	tests := map[string]struct {
		change  func(c *Cache, upsert func(*unstructured.Unstructured))
		changes bool
	}{
		"nothing changed": {change: func(*Cache, func(*unstructured.Unstructured)) {}},
		"an update of a tracked object": {
			change: func(_ *Cache, upsert func(*unstructured.Unstructured)) { upsert(configMap("a", "6", "shop")) }, changes: true},
		"a write recorded by a sync": {
			change: func(c *Cache, _ func(*unstructured.Unstructured)) { c.Record(configMap("b", "6", "shop")) }, changes: true},
		"a deleted tracked object": {
			change: func(c *Cache, _ func(*unstructured.Unstructured)) { c.remove(c.objects[key("b")]) }, changes: true},
		"an update of an untracked object asked about": {
			change: func(_ *Cache, upsert func(*unstructured.Unstructured)) { upsert(configMap("c", "6", "")) }, changes: true},
		"an object asked about becoming tracked": {
			change: func(_ *Cache, upsert func(*unstructured.Unstructured)) { upsert(configMap("c", "6", "shop")) }, changes: true},
		"a new object tracked to the app": {
			change: func(_ *Cache, upsert func(*unstructured.Unstructured)) { upsert(configMap("f", "6", "shop")) }, changes: true},
		"another app's object moving to the app": {
			change: func(_ *Cache, upsert func(*unstructured.Unstructured)) { upsert(configMap("e", "6", "shop")) }, changes: true},
		"an update of an untracked object not asked about": {
			change: func(_ *Cache, upsert func(*unstructured.Unstructured)) { upsert(configMap("d", "6", "")) }},
		"an update of another app's object": {
			change: func(_ *Cache, upsert func(*unstructured.Unstructured)) { upsert(configMap("e", "6", "blog")) }},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			c := newUnstartedCache()
			upsert := func(u *unstructured.Unstructured) { watchEvent(t, c, gvk, u) }
			for _, u := range base {
				upsert(u)
			}
			before := c.Versions("shop", asked)
			if again := c.Versions("shop", asked); again != before {
				t.Fatal("two digests of the same state differ")
			}
			tc.change(c, upsert)
			if changed := c.Versions("shop", asked) != before; changed != tc.changes {
				t.Errorf("digest changed: %v, want %v", changed, tc.changes)
			}
		})
	}
}
