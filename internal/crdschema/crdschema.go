// Package crdschema reads the defaults of custom resources' schemas from
// the cluster's CustomResourceDefinitions, for comparisons
// (diff.Schemas): the API server fills them in on every write, so a
// comparison that did not would find every custom resource whose manifest
// leaves out a defaulted field inside a list OutOfSync forever.
package crdschema

import (
	"context"
	"strings"
	"sync"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/skiffcd/skiff/internal/diff"
)

const (
	// defaultTTL is how long a CRD's defaults are used before the CRD is
	// read again: a CRD upgrade that changes its defaults is seen within it.
	defaultTTL = time.Minute
	// readTimeout bounds one read of a CRD.
	readTimeout = 10 * time.Second
)

var crdResource = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// Source is a diff.Schemas that reads each kind's CRD once per TTL and
// keeps only its defaults. When the CRD cannot be read (a namespaced
// install may not read CRDs), the defaults of the CRDs Skiff ships are
// used for the argoproj.io kinds.
type Source struct {
	dynamic dynamic.Interface
	mapper  meta.RESTMapper
	// TTL is how long defaults are kept; zero means a minute.
	TTL time.Duration
	// Now is the clock; nil means time.Now.
	Now func() time.Time

	mu      sync.Mutex
	entries map[schema.GroupVersionKind]entry
}

type entry struct {
	defaults *apiextensionsv1.JSONSchemaProps
	read     time.Time
}

// New returns a Source reading CRDs with dyn and finding their names with
// mapper.
func New(dyn dynamic.Interface, mapper meta.RESTMapper) *Source {
	return &Source{dynamic: dyn, mapper: mapper, entries: map[schema.GroupVersionKind]entry{}}
}

// DefaultsOf implements diff.Schemas.
func (s *Source) DefaultsOf(gvk schema.GroupVersionKind) *apiextensionsv1.JSONSchemaProps {
	// The built-in groups without a dot (core, apps, batch ...) have no CRD.
	if !strings.Contains(gvk.Group, ".") {
		return nil
	}
	now := s.now()
	s.mu.Lock()
	e, ok := s.entries[gvk]
	s.mu.Unlock()
	if ok && now.Sub(e.read) < s.ttl() {
		return e.defaults
	}
	defaults := s.read(gvk)
	s.mu.Lock()
	s.entries[gvk] = entry{defaults: defaults, read: now}
	s.mu.Unlock()
	return defaults
}

func (s *Source) read(gvk schema.GroupVersionKind) *apiextensionsv1.JSONSchemaProps {
	mapping, err := s.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return diff.EmbeddedDefaults(gvk)
	}
	ctx, cancel := context.WithTimeout(context.Background(), readTimeout)
	defer cancel()
	u, err := s.dynamic.Resource(crdResource).Get(ctx, mapping.Resource.Resource+"."+gvk.Group, metav1.GetOptions{})
	if err != nil {
		// Not a CRD (an aggregated API), or not readable.
		return diff.EmbeddedDefaults(gvk)
	}
	var crd apiextensionsv1.CustomResourceDefinition
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &crd); err != nil {
		return diff.EmbeddedDefaults(gvk)
	}
	return diff.DefaultsOfCRD(&crd)[gvk]
}

func (s *Source) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

func (s *Source) ttl() time.Duration {
	if s.TTL > 0 {
		return s.TTL
	}
	return defaultTTL
}
