package clusters

import (
	"slices"
	"sync"

	"github.com/skiffcd/skiff/api/v1alpha1"
)

// Static is a Registry held in memory: the implicit in-cluster entry and
// the clusters Set gives it, resolved as Secrets' are. Tests register
// clusters through it, without Secrets.
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
	return Snapshot{Clusters: s.List()}.Resolve(dest)
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

var _ Registry = (*Static)(nil)
