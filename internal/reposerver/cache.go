package reposerver

import (
	"container/list"
	"strings"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/skiffcd/skiff/internal/render"
)

// cacheResults counts rendered-manifest cache hits and misses.
var cacheResults = prometheus.NewCounterVec(prometheus.CounterOpts{
	Name: "skiff_render_cache_requests_total",
	Help: "Manifest requests by render cache result (hit or miss).",
}, []string{"result"})

func init() {
	metrics.Registry.MustRegister(cacheResults)
}

// manifestCache is a least-recently-used cache of rendered manifests,
// bounded by an estimate of the bytes it holds. It keeps one entry per
// slot (an application as one caller renders it, see cacheSlot): putting
// a new entry for a slot evicts the slot's previous one, so an app's old
// revisions do not stay until the byte bound pushes them out.
type manifestCache struct {
	mu       sync.Mutex
	maxBytes int64
	bytes    int64
	order    *list.List // front = most recently used
	entries  map[string]*list.Element
	slots    map[string]string // slot → key of its entry
}

type cacheEntry struct {
	key, slot string
	manifests []render.Manifest
	size      int64
}

func newManifestCache(maxBytes int64) *manifestCache {
	return &manifestCache{maxBytes: maxBytes, order: list.New(),
		entries: map[string]*list.Element{}, slots: map[string]string{}}
}

// cacheSlot names the entry a request replaces: the same app rendered for
// the same destination and cluster description. Every part of it is part
// of the cache key too, so a key always falls in one slot. The controller
// (which passes the cluster's API versions) and the API server (which does
// not) therefore keep one entry each per app rather than evicting each
// other's on every call; a new revision or source spec replaces the entry
// (so a sync to another revision than the target, a rollback, costs the
// next comparison one render).
func cacheSlot(req Request) string {
	return strings.Join(append([]string{req.AppName, req.Namespace, req.KubeVersion}, req.APIVersions...), "\x00")
}

func (c *manifestCache) get(key string) ([]render.Manifest, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.entries[key]
	if !ok {
		return nil, false
	}
	c.order.MoveToFront(el)
	return el.Value.(*cacheEntry).manifests, true
}

// put stores manifests under key as slot's only entry.
func (c *manifestCache) put(slot, key string, manifests []render.Manifest) {
	size := estimateSize(manifests)
	c.mu.Lock()
	defer c.mu.Unlock()
	// The slot's previous entry is outdated even when the new one is too
	// large to keep.
	if prev, ok := c.slots[slot]; ok && prev != key {
		c.removeLocked(prev)
	}
	if size > c.maxBytes {
		return // larger than the whole cache: keeping it would evict everything
	}
	c.removeLocked(key)
	c.entries[key] = c.order.PushFront(&cacheEntry{key: key, slot: slot, manifests: manifests, size: size})
	c.slots[slot] = key
	c.bytes += size
	for c.bytes > c.maxBytes {
		c.removeLocked(c.order.Back().Value.(*cacheEntry).key)
	}
}

// removeLocked drops the entry of key, if any, and its slot's index.
func (c *manifestCache) removeLocked(key string) {
	el, ok := c.entries[key]
	if !ok {
		return
	}
	e := el.Value.(*cacheEntry)
	c.order.Remove(el)
	delete(c.entries, key)
	if c.slots[e.slot] == key {
		delete(c.slots, e.slot)
	}
	c.bytes -= e.size
}

// estimateSize approximates the memory of manifests by their JSON size.
func estimateSize(manifests []render.Manifest) int64 {
	var n int64
	for _, m := range manifests {
		if data, err := m.Object.MarshalJSON(); err == nil {
			n += int64(len(data)) * 3 // decoded maps cost a few times their text
		}
		n += int64(len(m.File))
	}
	return n
}
