package reposerver

import (
	"container/list"
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
// bounded by an estimate of the bytes it holds.
type manifestCache struct {
	mu       sync.Mutex
	maxBytes int64
	bytes    int64
	order    *list.List // front = most recently used
	entries  map[string]*list.Element
}

type cacheEntry struct {
	key       string
	manifests []render.Manifest
	size      int64
}

func newManifestCache(maxBytes int64) *manifestCache {
	return &manifestCache{maxBytes: maxBytes, order: list.New(), entries: map[string]*list.Element{}}
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

func (c *manifestCache) put(key string, manifests []render.Manifest) {
	size := estimateSize(manifests)
	c.mu.Lock()
	defer c.mu.Unlock()
	if size > c.maxBytes {
		return // larger than the whole cache: keeping it would evict everything
	}
	if el, ok := c.entries[key]; ok {
		c.bytes -= el.Value.(*cacheEntry).size
		c.order.Remove(el)
	}
	c.entries[key] = c.order.PushFront(&cacheEntry{key: key, manifests: manifests, size: size})
	c.bytes += size
	for c.bytes > c.maxBytes {
		oldest := c.order.Back()
		e := oldest.Value.(*cacheEntry)
		c.order.Remove(oldest)
		delete(c.entries, e.key)
		c.bytes -= e.size
	}
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
