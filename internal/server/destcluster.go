package server

import (
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"github.com/skiffcd/skiff/api/v1alpha1"
	"github.com/skiffcd/skiff/internal/appops"
	"github.com/skiffcd/skiff/internal/clusters"
	"github.com/skiffcd/skiff/internal/crdschema"
)

// liveReader reads the live objects of one cluster, and its CRDs'
// defaults for comparisons (kept with the clients, so that diffs and trees
// do not read the CRDs again on every request).
type liveReader struct {
	dynamic dynamic.Interface
	mapper  meta.RESTMapper
	schemas *crdschema.Source
}

// renderer reads live objects in app's cluster and renders apps with the
// server's repo server: the manifests, diffs and tree of an app deploying
// to a registered cluster show that cluster's objects.
func (s *Server) renderer(app *v1alpha1.Application) (*appops.Renderer, error) {
	if s.Dynamic == nil || s.Mapper == nil {
		return nil, errNoLiveReader
	}
	cluster, err := appops.ResolveCluster(app.Spec.Destination, s.Clusters)
	if err != nil {
		return nil, err
	}
	if cluster.IsInCluster() {
		s.localSchemasOnce.Do(func() { s.localSchemas = crdschema.New(s.Dynamic, s.Mapper) })
		return &appops.Renderer{Repo: s.Repo, Dynamic: s.Dynamic, Mapper: s.Mapper, KubeVersion: s.KubeVersion, Schemas: s.localSchemas, IgnoreDifferences: s.IgnoreDifferences,
			KnownTypeFields: s.KnownTypeFields}, nil
	}
	reader, err := s.liveReaderOf(cluster)
	if err != nil {
		return nil, err
	}
	return &appops.Renderer{Repo: s.Repo, Dynamic: reader.dynamic, Mapper: reader.mapper, Schemas: reader.schemas, IgnoreDifferences: s.IgnoreDifferences,
		KnownTypeFields: s.KnownTypeFields}, nil
}

// liveReaderOf returns the clients of cluster c, built on first use and
// kept until a cluster Secret changes (credentials may have).
func (s *Server) liveReaderOf(c clusters.Cluster) (*liveReader, error) {
	s.liveReadersMu.Lock()
	defer s.liveReadersMu.Unlock()
	if s.liveReaders == nil {
		s.liveReaders = map[string]*liveReader{}
		s.Clusters.Subscribe(func() {
			s.liveReadersMu.Lock()
			defer s.liveReadersMu.Unlock()
			clear(s.liveReaders)
		})
	}
	if r := s.liveReaders[c.Server]; r != nil {
		return r, nil
	}
	cfg, err := c.RESTConfig(nil)
	if err != nil {
		return nil, fmt.Errorf("cluster %s: %w", c.Name, err)
	}
	r, err := newLiveReader(cfg)
	if err != nil {
		return nil, fmt.Errorf("cluster %s: %w", c.Name, err)
	}
	s.liveReaders[c.Server] = r
	return r, nil
}

func newLiveReader(cfg *rest.Config) (*liveReader, error) {
	dyn, mapper, err := appops.LiveClients(cfg)
	if err != nil {
		return nil, err
	}
	return &liveReader{dynamic: dyn, mapper: mapper, schemas: crdschema.New(dyn, mapper)}, nil
}
