package clustercache

import (
	"context"
	"maps"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Tracking returns how objects are tied to Applications now.
func (c *Cache) Tracking() Tracking {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.tracking.withDefaults()
}

// SetTracking makes t how objects are tied to Applications from now on
// (argocd-cm's tracking method or instance label changed): every object
// the cache holds is judged again, one that becomes tracked is read whole
// from the API server (the cache kept only the metadata of untracked
// objects), a kind watched by metadata only with a newly tracked object is
// watched whole, and the apps that gain or lose objects are told. A read
// that fails leaves the object untracked until its next watch event.
func (c *Cache) SetTracking(ctx context.Context, t Tracking) {
	t = t.withDefaults()
	c.mu.Lock()
	if c.tracking.withDefaults() == t {
		c.mu.Unlock()
		return
	}
	c.tracking = t
	held := maps.Clone(c.objects)
	subscribers := c.subscribers
	c.mu.Unlock()

	var fetch []ResourceKey
	var events []Event
	for key, s := range held {
		obj := s.object()
		app := OwningApp(obj, t)
		gk := schema.GroupKind{Group: key.Group, Kind: key.Kind}
		switch {
		case s.partial:
			// Untracked until watched whole, whatever it says.
			if app != "" {
				if gvr, ok := c.resourceOf(gk); ok {
					c.wantFull(gvr)
				}
			}
			continue
		case app == s.app:
			continue
		case s.app == "":
			// Stored trimmed: its body comes from the API server.
			fetch = append(fetch, key)
			continue
		}
		moved := *s
		moved.app, moved.health = app, ""
		if app != "" && c.opts.Health != nil {
			moved.health = c.opts.Health(obj)
		}
		c.mu.Lock()
		if c.objects[key] == s {
			c.unindexLocked(s)
			delete(c.objects, key)
			c.storeLocked(&moved)
			events = append(events, Event{App: s.app, Key: key}, Event{App: app, Key: key})
		}
		c.mu.Unlock()
	}
	for _, key := range fetch {
		live, ok, err := c.GetFull(ctx, key)
		if err != nil || !ok {
			continue
		}
		trim(live, t)
		s, err := store(live, t, c.opts.judges())
		if err != nil || s.app == "" {
			continue
		}
		c.mu.Lock()
		if old, held := c.objects[key]; held && !laterVersion(old.meta.ResourceVersion, s.meta.ResourceVersion) {
			c.unindexLocked(old)
			delete(c.objects, key)
			c.storeLocked(s)
			events = append(events, Event{App: s.app, Key: key})
		}
		c.mu.Unlock()
	}
	for _, e := range events {
		if e.App != "" {
			c.notify(subscribers, e)
		}
	}
}
