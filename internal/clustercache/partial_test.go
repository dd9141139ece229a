package clustercache

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

// metadataEvent delivers u's metadata to c as a metadata-only watch does.
func metadataEvent(t *testing.T, c *Cache, gvk schema.GroupVersionKind, u *unstructured.Unstructured) {
	t.Helper()
	m := &metav1.PartialObjectMetadata{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, m); err != nil {
		t.Fatal(err)
	}
	s, _, err := storeMetadata(gvk, m, DefaultTracking())
	if err != nil {
		t.Fatal(err)
	}
	c.upsert(s)
}

// While a kind moves from a metadata-only watch to a whole one, both
// deliver events: a whole copy of a version wins over a partial one, and no
// partial copy is taken for a tracked object's body.
func TestWholeAndPartialCopiesOfAnObject(t *testing.T) {
	configMap := func(rv string) *unstructured.Unstructured {
		u := object("v1", "ConfigMap", "web", "cfg", map[string]string{TrackingAnnotation: "shop:/ConfigMap:web/cfg"}, nil)
		u.SetResourceVersion(rv)
		u.Object["data"] = map[string]any{"rv": rv}
		return u
	}
	type event struct {
		rv    string
		whole bool
	}
	tests := map[string]struct {
		events []event
		// wantData is the data the cache gives, "" for a partial copy.
		wantData   string
		wantApp    bool
		wantEvents int
		// upgrading: the kind's whole watch is asked for; full: it is
		// watched whole, its metadata-only watch ended.
		upgrading, full bool
	}{
		"a partial copy of a tracked object counts as untracked": {
			events: []event{{"10", false}}, wantEvents: 1},
		"a whole copy of the same version replaces it and is heard by its app": {
			events: []event{{"10", false}, {"10", true}}, wantData: "10", wantApp: true, wantEvents: 2},
		"a partial copy of the same version leaves the whole one": {
			events: []event{{"10", true}, {"10", false}}, wantData: "10", wantApp: true, wantEvents: 1},
		"a whole copy older than the partial one is ignored": {
			events: []event{{"11", false}, {"10", true}}, wantEvents: 1},
		// Its app hears the object leave it, as the partial copy is heard.
		"a later partial copy replaces a whole one": {
			events: []event{{"10", true}, {"11", false}}, wantEvents: 3},
		// The whole watch brings that version; until then the whole copy
		// stands, and the app hears of the change once.
		"while the kind's whole watch starts, a later partial copy leaves a whole one": {
			events: []event{{"10", true}, {"11", false}}, upgrading: true, wantData: "10", wantApp: true, wantEvents: 1},
		"while the kind's whole watch starts, that watch's copy of a later version is heard": {
			events: []event{{"10", true}, {"11", false}, {"11", true}}, upgrading: true, wantData: "11", wantApp: true, wantEvents: 2},
		"the whole watch catches up with the partial one": {
			events: []event{{"10", true}, {"11", false}, {"11", true}}, wantData: "11", wantApp: true, wantEvents: 4},
		"once the kind is watched whole, a late partial copy is ignored": {
			events: []event{{"10", true}, {"11", false}}, full: true, wantData: "10", wantApp: true, wantEvents: 1},
	}
	gvk := schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			c := newUnstartedCache()
			c.watched = map[schema.GroupVersionResource]*kindWatch{
				{Version: "v1", Resource: "configmaps"}: {gvk: gvk, wantFull: tc.upgrading || tc.full, full: tc.full}}
			heard := 0
			c.Subscribe(func(Event) { heard++ })
			for _, e := range tc.events {
				if e.whole {
					watchEvent(t, c, gvk, configMap(e.rv))
				} else {
					metadataEvent(t, c, gvk, configMap(e.rv))
				}
			}
			got, ok := c.Get(ResourceKey{Kind: "ConfigMap", Namespace: "web", Name: "cfg"})
			if !ok {
				t.Fatal("the object is not cached")
			}
			if data, _, _ := unstructured.NestedString(got.Object, "data", "rv"); data != tc.wantData {
				t.Errorf("cached data %q, want %q", data, tc.wantData)
			}
			if got.GetAnnotations()[TrackingAnnotation] == "" || got.GetKind() != "ConfigMap" || got.GetAPIVersion() != "v1" {
				t.Errorf("the cached copy lost its kind or metadata: %v", got.Object)
			}
			if tracked := len(c.AppObjects("shop")) == 1; tracked != tc.wantApp {
				t.Errorf("indexed under its app: %v, want %v", tracked, tc.wantApp)
			}
			if heard != tc.wantEvents {
				t.Errorf("%d notifications, want %d", heard, tc.wantEvents)
			}
		})
	}
}

// Two watches of a kind may report a deletion at different times: the
// late report of an earlier object must not drop the one recreated under
// its name.
func TestADeletionDropsOnlyTheObjectItNames(t *testing.T) {
	configMap := func(uid, rv string) *unstructured.Unstructured {
		u := object("v1", "ConfigMap", "web", "cfg", map[string]string{TrackingAnnotation: "shop:/ConfigMap:web/cfg"}, nil)
		u.SetUID(types.UID(uid))
		u.SetResourceVersion(rv)
		return u
	}
	tests := map[string]struct {
		deleted  *unstructured.Unstructured
		wantKept bool
	}{
		"the deletion of the cached object drops it": {deleted: configMap("second", "12")},
		"the deletion of an earlier object of the name is ignored": {
			deleted: configMap("first", "10"), wantKept: true},
	}
	gvk := schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			c := newUnstartedCache()
			watchEvent(t, c, gvk, configMap("second", "12"))
			s, err := transform(gvk, DefaultTracking, judges{})(tc.deleted)
			if err != nil {
				t.Fatal(err)
			}
			c.remove(s.(*stored))
			if kept := len(c.AppObjects("shop")) == 1; kept != tc.wantKept {
				t.Errorf("the cached object kept: %v, want %v", kept, tc.wantKept)
			}
		})
	}
}

// A deleted object must not come back through its metadata-only watch: a
// partial copy arriving after the kind is watched whole is ignored even
// when the cache no longer holds the object, and the partial copies left
// when the whole list is in (deleted objects whose deletion the stopped
// metadata watch never delivered) are dropped.
func TestALatePartialCopyDoesNotBringADeletedObjectBack(t *testing.T) {
	gvk := schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}
	key := ResourceKey{Kind: "ConfigMap", Namespace: "web", Name: "cfg"}
	cfg := func(rv string) *unstructured.Unstructured {
		u := object("v1", "ConfigMap", "web", "cfg", map[string]string{TrackingAnnotation: "shop:/ConfigMap:web/cfg"}, nil)
		u.SetResourceVersion(rv)
		return u
	}
	c := newUnstartedCache()
	w := &kindWatch{gvk: gvk, wantFull: true, full: true}
	c.watched = map[schema.GroupVersionResource]*kindWatch{{Version: "v1", Resource: "configmaps"}: w}
	metadataEvent(t, c, gvk, cfg("11"))
	if _, ok := c.Get(key); ok {
		t.Fatal("a partial copy of an object the whole watch does not hold was cached")
	}

	w.full = false // the upgrade under way: the partial copy stands in
	metadataEvent(t, c, gvk, cfg("12"))
	if _, ok := c.Get(key); !ok {
		t.Fatal("during the upgrade the partial copy is not cached")
	}
	c.mu.Lock()
	c.dropPartialLocked(gvk)
	c.mu.Unlock()
	if _, ok := c.Get(key); ok {
		t.Error("the partial copy of a deleted object outlived the whole list")
	}
}
