package application

import (
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/skiffcd/skiff/internal/clustercache"
	"github.com/skiffcd/skiff/internal/clusters"
)

// scope is where Skiff may deploy in one cluster: namespaces (nil: all),
// and cluster-scoped kinds when clusterResources; why ends the message of
// a refusal.
type scope struct {
	namespaces       []string
	clusterResources bool
	why              string
}

// scopeOf is the scope of a destination in cluster c for a Skiff that
// manages only namespace managed (skiff server --namespaced; "" for a
// cluster-wide install), which it runs in: a namespaced install manages
// its namespace alone; a cluster Secret's `namespaces` limit Skiff to
// those, with cluster-scoped kinds only if its `clusterResources` says so,
// as in Argo CD.
func scopeOf(managed string, c clusters.Cluster) scope {
	switch {
	case managed != "":
		return scope{namespaces: []string{managed},
			why: "this Skiff is a namespaced install and manages only namespace " + managed}
	case len(c.Namespaces) > 0:
		return scope{namespaces: c.Namespaces, clusterResources: c.ClusterResources,
			why: fmt.Sprintf("cluster %s is limited to namespaces %s", c.Name, strings.Join(c.Namespaces, ", "))}
	}
	return scope{clusterResources: true}
}

// CacheOptions limits opts, the options of a registered cluster's watch
// cache, to what the credentials of cluster c may be expected to read: the
// namespaces of its Secret, and cluster-scoped kinds only when its
// clusterResources says so (the credentials `skiff cluster add
// --namespace` makes hold Roles in those namespaces only).
func CacheOptions(c clusters.Cluster, opts clustercache.Options) clustercache.Options {
	s := scopeOf("", c)
	opts.Namespaces, opts.ClusterResources = s.namespaces, s.clusterResources
	return opts
}

// destinationOutOfScope says why s excludes the destination namespace
// dest; "" when it does not.
func destinationOutOfScope(s scope, dest string) string {
	if s.namespaces == nil || slices.Contains(s.namespaces, dest) {
		return ""
	}
	return fmt.Sprintf("spec.destination.namespace %q: %s", dest, s.why)
}

// objectOutOfScope says why s excludes obj, placed by
// appops.DefaultNamespaces (so a cluster-scoped object has no namespace);
// "" when it does not.
func objectOutOfScope(s scope, obj *unstructured.Unstructured) string {
	ns := obj.GetNamespace()
	if s.namespaces == nil || slices.Contains(s.namespaces, ns) || ns == "" && s.clusterResources {
		return ""
	}
	gvk := obj.GroupVersionKind()
	kind := gvk.Kind
	if gvk.Group != "" {
		kind = gvk.Group + "/" + gvk.Kind
	}
	if ns == "" {
		return fmt.Sprintf("%s %s is cluster-scoped: %s", kind, obj.GetName(), s.why)
	}
	return fmt.Sprintf("%s %s/%s: %s", kind, ns, obj.GetName(), s.why)
}
