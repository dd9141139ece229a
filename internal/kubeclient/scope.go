// Package kubeclient adapts the controller-runtime client to Skiff's hot
// paths. ScopeMemo remembers whether a kind is namespaced: a comparison and
// a sync ask it of every object, and the REST mapper answers by walking
// every API group, building a no-match error for each one that is not it.
// Applications wires in a client that reads and writes Applications,
// decoding each in one pass (see applications.go).
package kubeclient

import (
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// scopeTTL bounds how long a remembered scope is trusted: a kind's scope
// changes only when its CRD is deleted and created again with another one.
const scopeTTL = time.Minute

// ScopeMemo is a client.Client whose IsObjectNamespaced remembers each
// kind's answer for a minute. Errors (a kind not served yet) are not
// remembered.
type ScopeMemo struct {
	client.Client
	// Now is the clock; nil means time.Now.
	Now func() time.Time

	mu     sync.RWMutex
	scopes map[schema.GroupVersionKind]scope
}

type scope struct {
	namespaced bool
	seen       time.Time
}

// NewScopeMemo wraps c.
func NewScopeMemo(c client.Client) *ScopeMemo {
	return &ScopeMemo{Client: c}
}

func (c *ScopeMemo) now() time.Time {
	if c.Now != nil {
		return c.Now()
	}
	return time.Now()
}

// IsObjectNamespaced reports whether obj's kind is namespaced.
func (c *ScopeMemo) IsObjectNamespaced(obj runtime.Object) (bool, error) {
	gvk, err := c.GroupVersionKindFor(obj)
	if err != nil {
		return false, err
	}
	now := c.now()
	c.mu.RLock()
	s, ok := c.scopes[gvk]
	c.mu.RUnlock()
	if ok && now.Sub(s.seen) < scopeTTL {
		return s.namespaced, nil
	}
	namespaced, err := c.Client.IsObjectNamespaced(obj)
	if err != nil {
		return false, err
	}
	c.mu.Lock()
	if c.scopes == nil {
		c.scopes = map[schema.GroupVersionKind]scope{}
	}
	c.scopes[gvk] = scope{namespaced: namespaced, seen: now}
	c.mu.Unlock()
	return namespaced, nil
}
