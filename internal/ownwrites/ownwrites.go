// Package ownwrites remembers the resourceVersion of a controller's own
// writes until its informer cache shows them, so that a pass does not
// decide on a cached copy older than what an earlier pass wrote.
package ownwrites

import (
	"strconv"

	"github.com/skiffcd/skiff/internal/syncmap"
)

// Versions holds, per object, the version of the latest write recorded.
// The zero Versions is empty and ready to use.
type Versions[K comparable] struct {
	versions syncmap.Map[K, string]
}

// Wrote records a write of key that the API server answered at version.
func (v *Versions[K]) Wrote(key K, version string) { v.versions.Store(key, version) }

// CacheOlder reports whether a cached copy of key at resourceVersion cached
// predates the latest write recorded. Once the cache has caught up the
// record is dropped (unless a newer write replaced it meanwhile). Without a
// record (none since start) the cache, filled by a LIST after start, is
// current.
func (v *Versions[K]) CacheOlder(key K, cached string) bool {
	written, ok := v.versions.Load(key)
	if !ok {
		return false
	}
	if AtLeast(cached, written) {
		v.versions.CompareAndDelete(key, written)
		return false
	}
	return true
}

// Forget drops the record of key (an object deleted).
func (v *Versions[K]) Forget(key K) { v.versions.Delete(key) }

// Recorded reports whether a write of key waits for the cache.
func (v *Versions[K]) Recorded(key K) bool {
	_, ok := v.versions.Load(key)
	return ok
}

// AtLeast reports whether resourceVersion got is want or later. Resource
// versions are opaque strings; when both are integers (etcd's revisions,
// which the API server uses) a larger one is later, otherwise only
// equality counts.
func AtLeast(got, want string) bool {
	if got == want {
		return true
	}
	g, err1 := strconv.ParseUint(got, 10, 64)
	w, err2 := strconv.ParseUint(want, 10, 64)
	return err1 == nil && err2 == nil && g > w
}
