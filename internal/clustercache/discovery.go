package clustercache

import (
	"context"
	"fmt"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"
)

// discover starts informers for kinds not watched yet and waits for them,
// and for the full watches of those that hold tracked objects.
func (c *Cache) discover(ctx context.Context) error {
	lists, err := c.discovery.ServerPreferredResources()
	if err != nil && len(lists) == 0 {
		return fmt.Errorf("discovering API resources: %w", err)
	}
	// A partial failure (an aggregated API that is down) must not stop
	// watching everything else.
	var kinds []newKind
	for _, list := range lists {
		gv, err := schema.ParseGroupVersion(list.GroupVersion)
		if err != nil {
			continue
		}
		for _, r := range list.APIResources {
			if strings.Contains(r.Name, "/") || !hasVerbs(r.Verbs, "list", "watch") {
				continue
			}
			if !r.Namespaced && len(c.opts.Namespaces) > 0 && !c.opts.ClusterResources {
				continue
			}
			gvk := gv.WithKind(r.Kind)
			if c.excluded[gvk.GroupKind()] || (c.opts.Excluded != nil && c.opts.Excluded(gvk.GroupKind())) {
				continue
			}
			gvr := gv.WithResource(r.Name)
			if !c.isWatched(gvr) {
				kinds = append(kinds, newKind{gvr: gvr, gvk: gvk, namespaces: c.namespacesOf(r.Namespaced)})
			}
		}
	}
	if c.respectRBAC() == RespectRBACStrict {
		kinds = c.permittedKinds(ctx, kinds)
	}
	var started []cache.InformerSynced
	for _, k := range kinds {
		c.mu.Lock()
		w, known := c.watched[k.gvr]
		if !known {
			w = newKindWatch(k.gvk, k.namespaces)
			c.watched[k.gvr] = w
			delete(c.dropped, k.gvk.GroupKind())
		}
		c.mu.Unlock()
		if known {
			continue
		}
		started = append(started, c.watchMetadata(ctx, k.gvr, w))
	}
	if !cache.WaitForCacheSync(ctx.Done(), started...) {
		return fmt.Errorf("waiting for the cluster cache to sync: %w", ctx.Err())
	}
	return c.upgrade(ctx)
}

// newKind is a served kind discovery found unwatched.
type newKind struct {
	gvr        schema.GroupVersionResource
	gvk        schema.GroupVersionKind
	namespaces []string
}

func (c *Cache) isWatched(gvr schema.GroupVersionResource) bool {
	c.mu.RLock()
	defer c.mu.RUnlock()
	_, ok := c.watched[gvr]
	return ok
}

// namespacesOf are the namespaces a kind is watched in, one watch each:
// "" (all, or none for a cluster-scoped kind) unless the cache is limited
// to namespaces and the kind is namespaced.
func (c *Cache) namespacesOf(namespaced bool) []string {
	if !namespaced || len(c.opts.Namespaces) == 0 {
		return []string{""}
	}
	return c.opts.Namespaces
}

func hasVerbs(verbs []string, want ...string) bool {
	for _, w := range want {
		found := false
		for _, v := range verbs {
			if v == w {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// rediscoverLoop watches for new kinds after a CRD changed, and tries
// the kinds skipped for resource.respectRBAC again after an RBAC object
// changed, after RecheckRBAC and every rbacRecheck. Discovery is
// debounced: installing a chart with ten CRDs triggers one pass.
func (c *Cache) rediscoverLoop(ctx context.Context) {
	recheck := time.NewTicker(rbacRecheck)
	defer recheck.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-c.rediscover:
		case <-recheck.C:
			if !c.anySkipped() {
				continue
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(500 * time.Millisecond):
		}
		// Errors are retried at the next CRD change; the existing watches
		// keep working meanwhile.
		_ = c.discover(ctx)
	}
}

func (c *Cache) signalRediscover() {
	select {
	case c.rediscover <- struct{}{}:
	default:
	}
}
