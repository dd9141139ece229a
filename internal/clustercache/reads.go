package clustercache

import (
	"cmp"
	"context"
	"crypto/sha256"
	"fmt"
	"slices"
	"sort"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/skiffcd/skiff/internal/digest"
)

// Get returns the live object with key: a copy of its own.
func (c *Cache) Get(key ResourceKey) (*unstructured.Unstructured, bool) {
	c.mu.RLock()
	s, ok := c.objects[key]
	c.mu.RUnlock()
	if !ok {
		return nil, false
	}
	return s.object(), true
}

// GetFull returns the whole live object with key: the cached copy when an
// Application tracks it (stored whole), else, when the cache has seen it,
// a read from the API server (the cache keeps only the metadata of
// untracked objects). Not found is (nil, false, nil).
func (c *Cache) GetFull(ctx context.Context, key ResourceKey) (*unstructured.Unstructured, bool, error) {
	c.mu.RLock()
	s, ok := c.objects[key]
	c.mu.RUnlock()
	if !ok {
		return nil, false, nil
	}
	if s.app != "" {
		return s.object(), true, nil
	}
	gvr, ok := c.resourceOf(schema.GroupKind{Group: key.Group, Kind: key.Kind})
	if !ok {
		return nil, false, fmt.Errorf("reading %s: its kind is not watched", key)
	}
	live, err := c.dynamic.Resource(gvr).Namespace(key.Namespace).Get(ctx, key.Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("reading %s: %w", key, err)
	}
	return live, true, nil
}

// resourceOf returns the watched resource of kind gk.
func (c *Cache) resourceOf(gk schema.GroupKind) (schema.GroupVersionResource, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	for gvr, w := range c.watched {
		if w.gvk.GroupKind() == gk {
			return gvr, true
		}
	}
	return schema.GroupVersionResource{}, false
}

// AppObjects returns the live objects tracked to app, sorted by key: copies
// of their own.
func (c *Cache) AppObjects(app string) []*unstructured.Unstructured {
	c.mu.RLock()
	found := c.lookupLocked(c.byApp[app])
	c.mu.RUnlock()
	return decodeAll(found)
}

// Versions returns a digest of the versions of the objects tracked to app
// and of the objects keys name, tracked or not: it changes whenever one of
// them is created, updated, deleted or tracked to another app (written
// ones included: Record stores their versions), and costs no decoding. A
// comparison takes it before reading the live objects, so that a change it
// may have missed shows as a new digest the next time.
func (c *Cache) Versions(app string, keys []ResourceKey) [sha256.Size]byte {
	c.mu.RLock()
	all := make(map[ResourceKey]bool, len(c.byApp[app])+len(keys))
	for k := range c.byApp[app] {
		all[k] = true
	}
	for _, k := range keys {
		all[k] = true
	}
	sorted := make([]ResourceKey, 0, len(all))
	for k := range all {
		sorted = append(sorted, k)
	}
	slices.SortFunc(sorted, func(a, b ResourceKey) int {
		return cmp.Or(strings.Compare(a.Group, b.Group), strings.Compare(a.Kind, b.Kind),
			strings.Compare(a.Namespace, b.Namespace), strings.Compare(a.Name, b.Name))
	})
	fields := make([]string, 0, 7*len(sorted))
	for _, k := range sorted {
		fields = append(fields, k.Group, k.Kind, k.Namespace, k.Name)
		if s, ok := c.objects[k]; ok {
			fields = append(fields, "live", s.meta.ResourceVersion, s.app)
		} else {
			fields = append(fields, "absent", "", "")
		}
	}
	c.mu.RUnlock()
	return digest.Strings(fields...)
}

// lookupLocked returns the stored objects of keys, sorted by key.
func (c *Cache) lookupLocked(keys map[ResourceKey]bool) []*stored {
	sorted := make([]ResourceKey, 0, len(keys))
	for k := range keys {
		sorted = append(sorted, k)
	}
	sortKeys(sorted)
	out := make([]*stored, 0, len(sorted))
	for _, k := range sorted {
		out = append(out, c.objects[k])
	}
	return out
}

// decodeAll decodes objects outside the cache's lock.
func decodeAll(objects []*stored) []*unstructured.Unstructured {
	out := make([]*unstructured.Unstructured, len(objects))
	for i, s := range objects {
		out[i] = s.object()
	}
	return out
}

// Children returns the objects whose ownerReferences name uid (a
// Deployment's ReplicaSets, a ReplicaSet's Pods), sorted by key.
func (c *Cache) Children(uid types.UID) []*unstructured.Unstructured {
	c.mu.RLock()
	found := c.lookupLocked(c.children[uid])
	c.mu.RUnlock()
	return decodeAll(found)
}

// Watches reports whether the kind is watched (known to the API server and
// not excluded).
func (c *Cache) Watches(gk schema.GroupKind) bool {
	_, ok := c.resourceOf(gk)
	return ok
}

// Kinds returns the number of watched kinds.
func (c *Cache) Kinds() int {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return len(c.watched)
}

// Len returns the number of cached objects.
func (c *Cache) Len() int {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return len(c.objects)
}

func sortKeys(keys []ResourceKey) {
	sort.Slice(keys, func(i, j int) bool { return keys[i].String() < keys[j].String() })
}
