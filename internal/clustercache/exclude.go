package clustercache

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
		for _, stop := range []func(){w.stopMetadata, w.stopFull} {
			if stop != nil {
				stop()
			}
		}
		delete(c.watched, gvr)
		c.dropped[gk] = true
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
	}
	subscribers := c.subscribers
	c.mu.Unlock()
	for _, e := range events {
		c.notify(subscribers, e)
	}
	c.signalRediscover()
}
