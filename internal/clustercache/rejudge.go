package clustercache

import "k8s.io/apimachinery/pkg/runtime/schema"

// Rejudge judges again, by Options.Health, the tracked objects of the kinds
// stale names, and tells subscribers of each whose health changed
// (Event.HealthChanged), so that a change of the rules (argocd-cm's health
// scripts) reaches the apps at once rather than when each object next
// changes. The rules run outside the cache's lock.
func (c *Cache) Rejudge(stale func(schema.GroupKind) bool) {
	if c.opts.Health == nil {
		return
	}
	c.mu.RLock()
	var todo []*stored
	for _, s := range c.objects {
		if s.app != "" && !s.partial && stale(schema.GroupKind{Group: s.key.Group, Kind: s.key.Kind}) {
			todo = append(todo, s)
		}
	}
	c.mu.RUnlock()
	for _, s := range todo {
		judged := c.opts.Health(s.object())
		if judged == s.health {
			continue
		}
		rejudged := *s
		rejudged.health = judged
		c.mu.Lock()
		current := c.objects[s.key] == s
		if current {
			c.objects[s.key] = &rejudged
		}
		subscribers := c.subscribers
		c.mu.Unlock()
		if current {
			c.notify(subscribers, Event{App: s.app, Key: s.key, HealthChanged: true})
		}
	}
}
