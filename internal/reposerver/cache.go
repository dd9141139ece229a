package reposerver

import (
	"bytes"
	"container/list"
	"crypto/sha256"
	"fmt"
	"strings"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
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

// manifestCache is a least-recently-used cache of rendered manifests, or
// of the error a render failed with, bounded by the bytes it holds. It holds each manifest as JSON and decodes
// a copy on every hit: decoded maps cost three to four times their text,
// and a hit is one app's few objects. It keeps one entry per
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
	manifests []encodedManifest
	err       error // the render's failure, instead of manifests
	size      int64
}

// encodedManifest is a rendered manifest as the cache holds it.
type encodedManifest struct {
	raw  []byte // the object's JSON
	file string
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
// next comparison one render). The name is a hash of those parts: the
// cluster's API versions alone are a few KiB.
func cacheSlot(req Request) string {
	sum := sha256.Sum256([]byte(strings.Join(append([]string{req.AppName, req.Namespace, req.KubeVersion}, req.APIVersions...), "\x00")))
	return string(sum[:])
}

// get returns a copy of key's manifests, which the caller may modify, or
// the error its render failed with.
func (c *manifestCache) get(key string) ([]render.Manifest, bool, error) {
	c.mu.Lock()
	el, ok := c.entries[key]
	if ok {
		c.order.MoveToFront(el)
	}
	c.mu.Unlock()
	if !ok {
		return nil, false, nil
	}
	// An entry is never modified once stored: decode it unlocked.
	e := el.Value.(*cacheEntry)
	if e.err != nil {
		return nil, true, e.err
	}
	manifests, err := decodeManifests(e.manifests)
	if err != nil {
		return nil, false, nil // cannot happen: the cache encoded it; render again
	}
	return manifests, true, nil
}

// put stores manifests, or the render's failure renderErr, under key as
// slot's only entry. A manifest that does not encode (cannot happen: it was
// decoded from JSON or YAML) leaves the render uncached.
func (c *manifestCache) put(slot, key string, manifests []render.Manifest, renderErr error) {
	encoded, size, err := encodeManifests(manifests)
	if renderErr != nil {
		encoded, size, err = nil, int64(len(renderErr.Error())), nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	// The slot's previous entry is outdated even when the new one is too
	// large to keep.
	if prev, ok := c.slots[slot]; ok && prev != key {
		c.removeLocked(prev)
	}
	if err != nil || size > c.maxBytes {
		return // unencodable, or larger than the whole cache (keeping it would evict everything)
	}
	c.removeLocked(key)
	c.entries[key] = c.order.PushFront(&cacheEntry{key: key, slot: slot, manifests: encoded, err: renderErr, size: size})
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

// encodeManifests encodes manifests for the cache and counts the bytes
// the entry holds.
func encodeManifests(manifests []render.Manifest) ([]encodedManifest, int64, error) {
	encoded := make([]encodedManifest, len(manifests))
	var size int64
	for i, m := range manifests {
		raw, err := m.Object.MarshalJSON()
		if err != nil {
			return nil, 0, fmt.Errorf("encoding %s of %s: %w", m.Object.GetName(), m.File, err)
		}
		// The encoder's buffer has room to spare; the cache keeps the text.
		encoded[i] = encodedManifest{raw: bytes.Clone(raw), file: m.File}
		size += int64(len(raw) + len(m.File))
	}
	return encoded, size, nil
}

// decodeManifests decodes a cache entry into objects of the caller's own.
func decodeManifests(encoded []encodedManifest) ([]render.Manifest, error) {
	manifests := make([]render.Manifest, len(encoded))
	for i, e := range encoded {
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON(e.raw); err != nil {
			return nil, fmt.Errorf("decoding a cached manifest of %s: %w", e.file, err)
		}
		manifests[i] = render.Manifest{Object: u, File: e.file}
	}
	return manifests, nil
}
