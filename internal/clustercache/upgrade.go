package clustercache

import (
	"context"
	"fmt"
	"sync"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"
)

// wantFull asks for gvr to be watched whole.
func (c *Cache) wantFull(gvr schema.GroupVersionResource) {
	c.mu.Lock()
	w := c.watched[gvr]
	first := w != nil && !w.wantFull
	if first {
		w.wantFull = true
	}
	c.mu.Unlock()
	if first {
		select {
		case c.upgrades <- struct{}{}:
		default:
		}
	}
}

// upgradeLoop upgrades the kinds asked for after Start.
func (c *Cache) upgradeLoop(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-c.upgrades:
		}
		// An error is ctx's end.
		_ = c.upgrade(ctx)
	}
}

// upgrade watches whole each kind an Application tracks an object of. The
// full watch's list replaces the kind's partial objects (see storeLocked),
// which until then count as untracked, and notifies their apps; the
// metadata-only watch of each kind ends once that kind's list is in, so no
// change falls between the two. It returns when every list is in.
func (c *Cache) upgrade(ctx context.Context) error {
	c.upgradeMu.Lock()
	defer c.upgradeMu.Unlock()
	c.mu.RLock()
	var kinds []schema.GroupVersionResource
	for gvr, w := range c.watched {
		if w.wantFull && !w.full {
			kinds = append(kinds, gvr)
		}
	}
	c.mu.RUnlock()
	if len(kinds) == 0 {
		return nil
	}
	var wg sync.WaitGroup
	for _, gvr := range kinds {
		c.mu.RLock()
		w := c.watched[gvr]
		c.mu.RUnlock()
		if w == nil {
			continue // excluded or skipped meanwhile (Reexclude, skip)
		}
		synced := c.watchFull(ctx, gvr, w)
		// Each kind's metadata-only watch ends once its own list is in:
		// a kind whose list is slow or never comes (a CRD deleted
		// meanwhile) must not keep the others watched twice, where a
		// partial copy of each change would stand, untracked, for the
		// whole one and tell its app twice.
		wg.Add(1)
		go func() {
			defer wg.Done()
			if !cache.WaitForCacheSync(ctx.Done(), synced) {
				return
			}
			c.mu.Lock()
			// Not a watch of the kind started again since.
			if c.watched[gvr] != w {
				c.mu.Unlock()
				return
			}
			w.full = true
			w.stopMetadata()
			stale := c.dropPartialLocked(w.gvk)
			subscribers := c.subscribers
			c.mu.Unlock()
			for _, s := range stale {
				c.notify(subscribers, Event{App: s.app, Key: s.key, Deleted: true})
			}
		}()
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("waiting for the cluster cache to sync: %w", err)
	}
	return nil
}

// dropPartialLocked removes the partial copies of kind gvk once its whole
// list is in: every object that exists came whole in that list, so a
// partial copy left is of an object deleted meanwhile whose deletion the
// metadata-only watch, now stopped, did not deliver (its late copy came
// after the whole watch's deletion). Kept, it would stand for good: a
// deleted ConfigMap an app tracks would stay Synced and never be healed.
// It returns those that apps tracked, for their apps to hear of.
func (c *Cache) dropPartialLocked(gvk schema.GroupVersionKind) []*stored {
	var told []*stored
	for key, s := range c.objects {
		if !s.partial || key.Group != gvk.Group || key.Kind != gvk.Kind {
			continue
		}
		c.unindexLocked(s)
		delete(c.objects, key)
		if s.app != "" {
			told = append(told, s)
		}
	}
	return told
}
