package clustercache

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

// newUnstartedCache returns a Cache with annotation tracking that watches
// nothing: tests feed it watch events.
func newUnstartedCache() *Cache {
	return &Cache{
		opts:     Options{Tracking: DefaultTracking()},
		objects:  map[ResourceKey]*stored{},
		byApp:    map[string]map[ResourceKey]bool{},
		children: map[types.UID]map[ResourceKey]bool{},
	}
}

// watchEvent delivers u of kind gvk to c as the informer's transform makes
// watch events.
func watchEvent(t *testing.T, c *Cache, gvk schema.GroupVersionKind, u *unstructured.Unstructured) *stored {
	t.Helper()
	s, err := transform(gvk, DefaultTracking, judges{})(u)
	if err != nil {
		t.Fatal(err)
	}
	c.upsert(s.(*stored))
	return s.(*stored)
}

// A sync's writes reach the cache at once, and neither a recorded write
// nor a watch event ever moves an object back to an older version.
func TestRecordKeepsTheLaterVersion(t *testing.T) {
	configMap := func(rv, value string) *unstructured.Unstructured {
		u := object("v1", "ConfigMap", "web", "cfg", map[string]string{TrackingAnnotation: "shop:/ConfigMap:web/cfg"}, nil)
		u.SetResourceVersion(rv)
		u.Object["data"] = map[string]any{"k": value}
		return u
	}
	gvk := schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}
	tests := map[string]struct {
		cached    *unstructured.Unstructured
		recorded  *unstructured.Unstructured
		watched   *unstructured.Unstructured // a watch event after the record
		wantValue string                     // "" means not cached
		wantApp   bool
		// wantEvents counts the notifications of the record and the watch
		// event after it.
		wantEvents int
		// wantWatchedCopy: the cache holds the watch event's object itself
		// (which the informer holds too), not a second copy.
		wantWatchedCopy bool
	}{
		"a recorded update replaces an older cached copy": {
			cached: configMap("10", "old"), recorded: configMap("12", "new"), wantValue: "new", wantApp: true},
		"a recorded copy older than the cached one is ignored": {
			cached: configMap("12", "new"), recorded: configMap("10", "old"), wantValue: "new", wantApp: true},
		"a watch event older than the recorded write is ignored": {
			cached: configMap("10", "old"), recorded: configMap("12", "new"), watched: configMap("11", "between"), wantValue: "new", wantApp: true},
		"the watch event of the recorded write itself is no change, and replaces the recorded copy": {
			cached: configMap("10", "old"), recorded: configMap("12", "new"), watched: configMap("12", "new"), wantValue: "new", wantApp: true,
			wantWatchedCopy: true},
		"a watch event later than the recorded write is stored and heard": {
			cached: configMap("10", "old"), recorded: configMap("12", "new"), watched: configMap("13", "newer"), wantValue: "newer", wantApp: true, wantEvents: 1,
			wantWatchedCopy: true},
		"an object the cache has not seen is left to its watch event": {
			recorded: configMap("12", "new")},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			c := newUnstartedCache()
			watchEvent := func(u *unstructured.Unstructured) *stored { return watchEvent(t, c, gvk, u) }
			if tc.cached != nil {
				watchEvent(tc.cached)
			}
			events := 0
			c.Subscribe(func(Event) { events++ })
			c.Record(tc.recorded)
			var watched *stored
			if tc.watched != nil {
				watched = watchEvent(tc.watched)
			}
			key := ResourceKey{Kind: "ConfigMap", Namespace: "web", Name: "cfg"}
			got, ok := c.Get(key)
			value := ""
			if ok {
				value, _, _ = unstructured.NestedString(got.Object, "data", "k")
			}
			if value != tc.wantValue {
				t.Errorf("cached value %q, want %q", value, tc.wantValue)
			}
			if same := watched != nil && c.objects[key] == watched; same != tc.wantWatchedCopy {
				t.Errorf("the cache holds the watch event's object: %v, want %v", same, tc.wantWatchedCopy)
			}
			if events != tc.wantEvents {
				t.Errorf("%d notifications, want %d", events, tc.wantEvents)
			}
			if tracked := len(c.AppObjects("shop")) == 1; tracked != tc.wantApp {
				t.Errorf("indexed under its app: %v, want %v", tracked, tc.wantApp)
			}
		})
	}
}
