package clustercache

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// WatchStatus is how a cache's watches fare.
type WatchStatus struct {
	// LastSync is when one of the watches last listed, or started or
	// restarted watching, without an error; zero before the first. Watches
	// restart every few minutes, so it stays recent while the cluster
	// answers.
	LastSync time.Time
	// Failing are the errors of the watches whose last list or watch
	// failed, sorted, each naming its resource; a watch that succeeds
	// again leaves the list.
	Failing []string
}

// WatchStatus returns how the cache's watches fare.
func (c *Cache) WatchStatus() WatchStatus {
	return c.health.status()
}

// watchHealth records the outcomes of the informers' lists and watches.
type watchHealth struct {
	mu       sync.Mutex
	lastSync time.Time
	failing  map[string]string
}

// watchKey names the watch of resource gvr in namespace ns ("" for all).
func watchKey(gvr schema.GroupVersionResource, ns string) string {
	r := gvr.Resource
	if gvr.Group != "" {
		r += "." + gvr.Group
	}
	if ns != "" {
		r += " in " + ns
	}
	return r
}

// record notes the outcome of a list or watch of key. The error of a call
// whose context ended (a watch stopped on purpose) says nothing of the
// cluster and is not recorded.
func (h *watchHealth) record(ctx context.Context, key, what string, err error) {
	if err != nil && ctx.Err() != nil {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if err == nil {
		h.lastSync = time.Now()
		delete(h.failing, key)
		return
	}
	if h.failing == nil {
		h.failing = map[string]string{}
	}
	h.failing[key] = fmt.Sprintf("%s %s: %v", what, key, err)
}

// forget leaves out the watches keys, no longer run: their failures say
// nothing any more.
func (h *watchHealth) forget(keys []string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, k := range keys {
		delete(h.failing, k)
	}
}

func (h *watchHealth) status() WatchStatus {
	h.mu.Lock()
	defer h.mu.Unlock()
	s := WatchStatus{LastSync: h.lastSync}
	for _, msg := range h.failing {
		s.Failing = append(s.Failing, msg)
	}
	slices.SortFunc(s.Failing, strings.Compare)
	return s
}
