package clustercache

import (
	"context"
	"fmt"

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
// metadata-only watch ends once that list is in, so no change falls
// between the two.
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
	var started []cache.InformerSynced
	upgraded := map[schema.GroupVersionResource]*kindWatch{}
	for _, gvr := range kinds {
		c.mu.RLock()
		w := c.watched[gvr]
		c.mu.RUnlock()
		if w == nil {
			continue // excluded or skipped meanwhile (Reexclude, skip)
		}
		upgraded[gvr] = w
		started = append(started, c.watchFull(ctx, gvr, w))
	}
	if !cache.WaitForCacheSync(ctx.Done(), started...) {
		return fmt.Errorf("waiting for the cluster cache to sync: %w", ctx.Err())
	}
	c.mu.Lock()
	for gvr, w := range upgraded {
		// Not a watch of the kind started again since.
		if c.watched[gvr] == w {
			w.full = true
			w.stopMetadata()
		}
	}
	c.mu.Unlock()
	return nil
}
