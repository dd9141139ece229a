package clustercache

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// The values of argocd-cm's resource.respectRBAC that Options.RespectRBAC
// answers; "" is Argo CD's default: every listable kind is watched, and one
// the credentials may not list keeps the cache from filling.
const (
	// RespectRBACNormal skips a kind whose list or watch is refused (403).
	RespectRBACNormal = "normal"
	// RespectRBACStrict also asks a SelfSubjectAccessReview before
	// watching a kind, so a kind that may not be listed is never asked.
	RespectRBACStrict = "strict"
)

// rbacRecheck is how often the kinds skipped for RBAC are tried again,
// for a cluster whose RBAC objects the cache cannot watch.
const rbacRecheck = 3 * time.Minute

// respectRBAC is the resource.respectRBAC in force.
func (c *Cache) respectRBAC() string {
	if c.opts.RespectRBAC == nil {
		return ""
	}
	return c.opts.RespectRBAC()
}

// refused notes that a list or watch of w was refused with err: with
// resource.respectRBAC the kind is skipped at once, without it the
// refusal is kept for RecheckRBAC.
func (c *Cache) refused(gvr schema.GroupVersionResource, w *kindWatch, err error) {
	c.mu.Lock()
	w.refusal = err.Error()
	c.mu.Unlock()
	if c.respectRBAC() != "" {
		c.skip(gvr, w, err.Error())
	}
}

// skip stops watching w, a kind the credentials may not list, for reason:
// its objects leave the cache (their apps are told, as of deletions), its
// informers count as synced, and it is tried again on the next discovery
// (a CRD change, an RBAC change, RecheckRBAC or rbacRecheck).
func (c *Cache) skip(gvr schema.GroupVersionResource, w *kindWatch, reason string) {
	c.mu.Lock()
	if c.watched[gvr] != w {
		c.mu.Unlock()
		return // skipped or excluded already
	}
	gk := w.gvk.GroupKind()
	_, known := c.skipped[gk]
	c.skipped[gk] = reason
	events := c.unwatchLocked(gvr, w)
	subscribers := c.subscribers
	c.mu.Unlock()
	c.health.forget(w.keys(gvr))
	if !known {
		c.opts.Log.Info("not watching a kind the credentials may not list (resource.respectRBAC)", "kind", gk.String(), "reason", reason)
	}
	for _, e := range events {
		c.notify(subscribers, e)
	}
}

// permittedAgain notes that a list of w succeeded: a kind skipped before
// is watched again.
func (c *Cache) permittedAgain(w *kindWatch) {
	gk := w.gvk.GroupKind()
	c.mu.RLock()
	_, was := c.skipped[gk]
	refused := w.refusal != ""
	c.mu.RUnlock()
	if !was && !refused {
		return
	}
	c.mu.Lock()
	w.refusal = ""
	delete(c.skipped, gk)
	c.mu.Unlock()
	if was {
		c.opts.Log.Info("watching a kind the credentials may list again", "kind", gk.String())
	}
}

// RecheckRBAC applies a change of Options.RespectRBAC's answer: with
// resource.respectRBAC set, the kinds whose list is being refused are
// skipped now; without, no kind is skipped any more. In every case the
// skipped kinds are discovered and tried again.
func (c *Cache) RecheckRBAC() {
	if c.respectRBAC() != "" {
		type refusedWatch struct {
			gvr    schema.GroupVersionResource
			w      *kindWatch
			reason string
		}
		var refused []refusedWatch
		c.mu.RLock()
		for gvr, w := range c.watched {
			if w.refusal != "" {
				refused = append(refused, refusedWatch{gvr, w, w.refusal})
			}
		}
		c.mu.RUnlock()
		for _, r := range refused {
			c.skip(r.gvr, r.w, r.reason)
		}
	} else {
		c.mu.Lock()
		clear(c.skipped)
		c.mu.Unlock()
	}
	c.signalRediscover()
}

// Skipped returns the kinds skipped for resource.respectRBAC, each with
// why, sorted.
func (c *Cache) Skipped() []string {
	c.mu.RLock()
	defer c.mu.RUnlock()
	out := make([]string, 0, len(c.skipped))
	for gk, reason := range c.skipped {
		out = append(out, gk.String()+": "+reason)
	}
	slices.Sort(out)
	return out
}

// SkippedKind reports whether gk is skipped for resource.respectRBAC.
func (c *Cache) SkippedKind(gk schema.GroupKind) bool {
	c.mu.RLock()
	defer c.mu.RUnlock()
	_, ok := c.skipped[gk]
	return ok
}

// skipUnwatched notes gk, not watched yet, as skipped for reason.
func (c *Cache) skipUnwatched(gk schema.GroupKind, reason string) {
	c.mu.Lock()
	_, known := c.skipped[gk]
	c.skipped[gk] = reason
	c.mu.Unlock()
	if !known {
		c.opts.Log.Info("not watching a kind the credentials may not list (resource.respectRBAC)", "kind", gk.String(), "reason", reason)
	}
}

// anySkipped reports whether a kind is skipped for resource.respectRBAC.
func (c *Cache) anySkipped() bool {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return len(c.skipped) > 0
}

// reviewWorkers bounds the SelfSubjectAccessReviews asked at once: a
// cluster serves a hundred kinds or more, and a remote one answers each
// after a round trip.
const reviewWorkers = 8

// permittedKinds returns the kinds the credentials may list and watch
// (mayList), skipping the others (resource.respectRBAC strict).
func (c *Cache) permittedKinds(ctx context.Context, kinds []newKind) []newKind {
	denied := make([]string, len(kinds))
	slots := make(chan struct{}, reviewWorkers)
	var wg sync.WaitGroup
	for i, k := range kinds {
		slots <- struct{}{}
		wg.Go(func() {
			defer func() { <-slots }()
			denied[i] = c.mayList(ctx, k.gvr, k.namespaces)
		})
	}
	wg.Wait()
	var out []newKind
	for i, k := range kinds {
		if denied[i] != "" {
			c.skipUnwatched(k.gvk.GroupKind(), denied[i])
			continue
		}
		out = append(out, k)
	}
	return out
}

// mayList asks the API server, by a SelfSubjectAccessReview per namespace
// and verb, whether the credentials may list and watch gvr in namespaces
// ("" for all). It returns why not, or "" when they may; a review that
// fails says nothing and the watch's own answer decides.
func (c *Cache) mayList(ctx context.Context, gvr schema.GroupVersionResource, namespaces []string) string {
	for _, ns := range namespaces {
		for _, verb := range []string{"list", "watch"} {
			review := &authorizationv1.SelfSubjectAccessReview{Spec: authorizationv1.SelfSubjectAccessReviewSpec{
				ResourceAttributes: &authorizationv1.ResourceAttributes{Namespace: ns, Verb: verb, Group: gvr.Group, Resource: gvr.Resource}}}
			got, err := c.reviews.Create(ctx, review, metav1.CreateOptions{})
			if err != nil || got.Status.Allowed {
				continue
			}
			return deniedReason(verb, gvr, ns, got.Status.Reason)
		}
	}
	return ""
}

// deniedReason is why a SelfSubjectAccessReview denied verb on gvr in ns.
func deniedReason(verb string, gvr schema.GroupVersionResource, ns, reason string) string {
	where := "cluster-wide"
	if ns != "" {
		where = "in namespace " + ns
	}
	msg := fmt.Sprintf("%s %s %s is not permitted (SelfSubjectAccessReview)", verb, gvr.GroupResource(), where)
	if reason = strings.TrimSpace(reason); reason != "" {
		msg += ": " + reason
	}
	return msg
}

// isRefusal reports whether err is the API server refusing the
// credentials a kind (403), which resource.respectRBAC skips. A 401 is
// not: credentials refused everywhere would empty the cache.
func isRefusal(err error) bool {
	return apierrors.IsForbidden(err)
}
