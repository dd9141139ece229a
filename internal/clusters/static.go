package clusters

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/skiffcd/skiff/api/v1alpha1"
)

// Static is a Registry held in memory: the implicit in-cluster entry and
// the clusters Set gives it. It serves until the registry that follows
// cluster Secrets is in, and tests that register clusters directly.
type Static struct {
	mu        sync.Mutex
	clusters  []Cluster
	listeners []func()
}

// NewStatic returns a registry of the in-cluster entry and extra.
func NewStatic(extra ...Cluster) *Static {
	return &Static{clusters: append([]Cluster{InCluster()}, extra...)}
}

// Set replaces the clusters beside the in-cluster entry and tells the
// subscribers.
func (s *Static) Set(extra ...Cluster) {
	s.mu.Lock()
	s.clusters = append([]Cluster{InCluster()}, extra...)
	listeners := slices.Clone(s.listeners)
	s.mu.Unlock()
	for _, fn := range listeners {
		fn()
	}
}

// Resolve implements Registry.
func (s *Static) Resolve(dest v1alpha1.ApplicationDestination) (Cluster, error) {
	return Resolve(s.List(), dest)
}

// List implements Registry.
func (s *Static) List() []Cluster {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.clusters)
}

// Subscribe implements Registry.
func (s *Static) Subscribe(fn func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.listeners = append(s.listeners, fn)
}

// Resolve finds the cluster of known that dest names: by server (a
// trailing slash aside) when it has one, else by name. A destination
// giving both must name the same cluster twice.
func Resolve(known []Cluster, dest v1alpha1.ApplicationDestination) (Cluster, error) {
	server := strings.TrimSuffix(dest.Server, "/")
	for _, c := range known {
		switch {
		case server != "" && c.Server != server:
		case server == "" && (dest.Name == "" || c.Name != dest.Name):
		case dest.Name != "" && c.Name != dest.Name:
			return Cluster{}, fmt.Errorf("cluster %q is named %q, not %q: %w", server, c.Name, dest.Name, ErrNotFound)
		default:
			return c, nil
		}
	}
	return Cluster{}, fmt.Errorf("cluster %q is not configured: %w", cmp.Or(dest.Server, dest.Name), ErrNotFound)
}
