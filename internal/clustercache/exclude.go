package clustercache

import "k8s.io/apimachinery/pkg/runtime/schema"

// Reexclude applies a change of Options.Excluded's answers: the watched
// kinds it now excludes are no longer watched and their objects leave the
// cache (their apps are told, as of deletions), and the kinds it no longer
// excludes are discovered and watched again.
func (c *Cache) Reexclude() {
	if c.opts.Excluded == nil {
		return
	}
	var events []Event
	c.mu.Lock()
	for gvr, w := range c.watched {
		gk := w.gvk.GroupKind()
		if !c.opts.Excluded(gk) {
			continue
		}
		events = append(events, c.unwatchLocked(gvr, w)...)
	}
	subscribers := c.subscribers
	c.mu.Unlock()
	for _, e := range events {
		c.notify(subscribers, e)
	}
	c.signalRediscover()
}

// unwatchLocked stops watching w, the kind of gvr: its informers end
// (and count as synced, so nothing waits for them), late events of them
// are ignored, and its objects leave the cache. It
// returns the deletions to tell their apps of.
func (c *Cache) unwatchLocked(gvr schema.GroupVersionResource, w *kindWatch) []Event {
	for _, stop := range []func(){w.stopMetadata, w.stopFull} {
		if stop != nil {
			stop()
		}
	}
	gk := w.gvk.GroupKind()
	w.stopped = true
	delete(c.watched, gvr)
	c.dropped[gk] = true
	var events []Event
	for key, s := range c.objects {
		if key.Group != gk.Group || key.Kind != gk.Kind {
			continue
		}
		c.unindexLocked(s)
		delete(c.objects, key)
		if s.app != "" {
			events = append(events, Event{App: s.app, Key: key, Deleted: true})
		}
	}
	return events
}
