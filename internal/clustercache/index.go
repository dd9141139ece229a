package clustercache

import (
	"strconv"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func (c *Cache) upsert(s *stored) {
	c.mu.Lock()
	if c.dropped[schema.GroupKind{Group: s.key.Group, Kind: s.key.Kind}] {
		c.mu.Unlock()
		return
	}
	if s.partial && c.lateMetadataLocked(s) {
		c.mu.Unlock()
		return
	}
	old, changed := c.storeLocked(s)
	if !changed {
		c.shareLocked(s)
	}
	subscribers := c.subscribers
	c.mu.Unlock()
	if !changed || quietUpdate(old, s) {
		return
	}
	healthChanged := old != nil && s.app != "" && old.app == s.app && old.health != s.health
	c.notify(subscribers, Event{App: s.app, Key: s.key, HealthChanged: healthChanged})
	if old != nil && old.app != "" && old.app != s.app {
		c.notify(subscribers, Event{App: old.app, Key: s.key})
	}
}

// lateMetadataLocked reports whether s, a partial copy, is a late event of
// a metadata-only watch that a whole watch replaced or is replacing (see
// upgrade): the whole watch brings that version too, and the partial copy
// would stand, untracked, for the whole one in between: its app would see
// the object go missing and come back, and hear of each change twice.
func (c *Cache) lateMetadataLocked(s *stored) bool {
	for _, w := range c.watched {
		if w.gvk.Group != s.key.Group || w.gvk.Kind != s.key.Kind {
			continue
		}
		// Once the kind is watched whole, every partial copy is late, also
		// one of an object the whole watch has since deleted: it must not
		// return. While the whole watch starts, one held whole (recorded
		// from a sync, or listed whole) is kept until that watch replaces it.
		if w.full {
			return true
		}
		old, ok := c.objects[s.key]
		return w.wantFull && ok && !old.partial
	}
	return false
}

// quietUpdate reports whether s, replacing old, changes only what its app
// need not hear of: the same tracked object, by the same app, judged alike,
// with the same fingerprint (Options.Fingerprint).
func quietUpdate(old, s *stored) bool {
	return old != nil && s.app != "" && old.app == s.app && old.health == s.health &&
		s.fingerprint != "" && old.fingerprint == s.fingerprint
}

// Record stores objects as an update to the API server returned them (a
// sync's applies), so that every reader sees the write at once rather than
// when its watch event arrives. A copy older than the cached one is
// ignored, as is a watch event older than a recorded write or of the write
// itself (no subscriber hears of it then). Only objects
// the cache holds are recorded: a created object waits for its watch
// event, so that a deletion seen in between cannot be undone here.
// Recording notifies no subscriber: the writer knows what it wrote.
func (c *Cache) Record(objs ...*unstructured.Unstructured) {
	for _, obj := range objs {
		if obj == nil || obj.GetResourceVersion() == "" {
			continue
		}
		u := obj.DeepCopy()
		t := c.Tracking()
		trim(u, t)
		s, err := store(u, t, c.opts.judges())
		if err != nil {
			continue // its watch event brings it
		}
		c.mu.Lock()
		if _, known := c.objects[s.key]; known {
			c.storeLocked(s)
		}
		c.mu.Unlock()
	}
}

// storeLocked stores s unless the cache holds that version of it or a
// later one (by resourceVersion): the watch event of a recorded write, or a
// re-list's unchanged object, is no change. A whole copy of the version a
// partial one holds is one: it brings the body and the tracking. It
// returns the copy s replaced (nil for none) and whether s was stored.
func (c *Cache) storeLocked(s *stored) (replaced *stored, changed bool) {
	key := s.key
	if old, ok := c.objects[key]; ok {
		rv := s.meta.ResourceVersion
		same := old.meta.ResourceVersion == rv && !(old.partial && !s.partial)
		if rv != "" && (same || laterVersion(old.meta.ResourceVersion, rv)) {
			return nil, false
		}
		replaced = old
		c.unindexLocked(old)
	}
	c.objects[key] = s
	if s.app != "" {
		if c.byApp[s.app] == nil {
			c.byApp[s.app] = map[ResourceKey]bool{}
		}
		c.byApp[s.app][key] = true
	}
	for _, ref := range s.meta.OwnerReferences {
		if c.children[ref.UID] == nil {
			c.children[ref.UID] = map[ResourceKey]bool{}
		}
		c.children[ref.UID][key] = true
	}
	return replaced, true
}

// shareLocked replaces a recorded copy of the version a watch event
// delivered with the event's object: the informer holds that object
// anyway, and keeping both would hold every object a sync wrote twice
// until it next changes. Equal versions are the same object, so the
// indexes stay as they are; a partial copy never replaces a whole one, nor
// one Rejudge or SetTracking judged again under new rules.
func (c *Cache) shareLocked(s *stored) {
	if old, ok := c.objects[s.key]; ok && old != s && old.meta.ResourceVersion == s.meta.ResourceVersion && old.partial == s.partial && old.health == s.health && old.app == s.app {
		c.objects[s.key] = s
	}
}

// laterVersion reports whether resourceVersion a is later than b. Versions
// are opaque to clients in general; the API server's are etcd revisions,
// so two that both parse as numbers compare as numbers, and anything else
// counts as not later (the newcomer wins, as before versions were compared).
func laterVersion(a, b string) bool {
	x, err1 := strconv.ParseUint(a, 10, 64)
	y, err2 := strconv.ParseUint(b, 10, 64)
	return err1 == nil && err2 == nil && x > y
}

// remove drops the object a deletion event names. A deletion of another
// object of the same name (an earlier one, which a second watch of the kind
// reports late) leaves the one the cache holds.
func (c *Cache) remove(deleted *stored) {
	key := deleted.key
	c.mu.Lock()
	old, ok := c.objects[key]
	if !ok || old.meta.UID != deleted.meta.UID {
		c.mu.Unlock()
		return
	}
	c.unindexLocked(old)
	delete(c.objects, key)
	subscribers := c.subscribers
	c.mu.Unlock()
	c.notify(subscribers, Event{App: old.app, Key: key, Deleted: true})
}

func (c *Cache) unindexLocked(old *stored) {
	key := old.key
	if app := old.app; app != "" {
		delete(c.byApp[app], key)
		if len(c.byApp[app]) == 0 {
			delete(c.byApp, app)
		}
	}
	for _, ref := range old.meta.OwnerReferences {
		delete(c.children[ref.UID], key)
		if len(c.children[ref.UID]) == 0 {
			delete(c.children, ref.UID)
		}
	}
}

func (c *Cache) notify(subscribers []func(Event), e Event) {
	for _, fn := range subscribers {
		fn(e)
	}
}
