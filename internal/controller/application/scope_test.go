package application

import (
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/skiffcd/skiff/internal/clustercache"
	"github.com/skiffcd/skiff/internal/clusters"
	"github.com/skiffcd/skiff/internal/health"
)

// shopCluster is a cluster whose Secret limits Skiff to two namespaces.
var shopCluster = clusters.Cluster{Name: "shop", Server: "https://shop.example", Namespaces: []string{"shop-a", "shop-b"}}

func withClusterResources(c clusters.Cluster) clusters.Cluster {
	c.ClusterResources = true
	return c
}

func TestDestinationOutOfScope(t *testing.T) {
	tests := map[string]struct {
		managed, dest string
		cluster       clusters.Cluster
		want          string
	}{
		"a cluster-wide install deploys anywhere":           {managed: "", dest: "shop"},
		"a namespaced install deploys to its own namespace": {managed: "argocd", dest: "argocd"},
		"a namespaced install refuses another namespace": {managed: "argocd", dest: "shop",
			want: `spec.destination.namespace "shop": this Skiff is a namespaced install and manages only namespace argocd`},
		"a namespaced install refuses an empty destination namespace": {managed: "argocd", dest: "",
			want: `spec.destination.namespace "": this Skiff is a namespaced install and manages only namespace argocd`},
		"a cluster limited to namespaces takes a destination among them": {cluster: shopCluster, dest: "shop-b"},
		"a cluster limited to namespaces refuses another": {cluster: shopCluster, dest: "web",
			want: `spec.destination.namespace "web": cluster shop is limited to namespaces shop-a, shop-b`},
		"a cluster without limits takes any namespace": {cluster: clusters.Cluster{Name: "east"}, dest: "web"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := destinationOutOfScope(scopeOf(tc.managed, tc.cluster), tc.dest); got != tc.want {
				t.Errorf("destinationOutOfScope(%q, %q) = %q, want %q", tc.managed, tc.dest, got, tc.want)
			}
		})
	}
}

func TestObjectOutOfScope(t *testing.T) {
	object := func(apiVersion, kind, ns, name string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{}
		u.SetAPIVersion(apiVersion)
		u.SetKind(kind)
		u.SetNamespace(ns)
		u.SetName(name)
		return u
	}
	tests := map[string]struct {
		managed string
		cluster clusters.Cluster
		obj     *unstructured.Unstructured
		want    string
	}{
		"a cluster-wide install manages cluster-scoped objects": {
			managed: "", obj: object("rbac.authorization.k8s.io/v1", "ClusterRole", "", "reader")},
		"a cluster-wide install manages objects of any namespace": {
			managed: "", obj: object("v1", "ConfigMap", "shop", "settings")},
		"a namespaced install manages objects of its namespace": {
			managed: "argocd", obj: object("apps/v1", "Deployment", "argocd", "guestbook")},
		"a namespaced install refuses a cluster-scoped object, naming its group and kind": {
			managed: "argocd", obj: object("rbac.authorization.k8s.io/v1", "ClusterRole", "", "reader"),
			want: "rbac.authorization.k8s.io/ClusterRole reader is cluster-scoped: this Skiff is a namespaced install and manages only namespace argocd"},
		"a namespaced install refuses a Namespace": {
			managed: "argocd", obj: object("v1", "Namespace", "", "shop"),
			want: "Namespace shop is cluster-scoped: this Skiff is a namespaced install and manages only namespace argocd"},
		"a namespaced install refuses an object of another namespace": {
			managed: "argocd", obj: object("v1", "ConfigMap", "shop", "settings"),
			want: "ConfigMap shop/settings: this Skiff is a namespaced install and manages only namespace argocd"},
		"a cluster limited to namespaces manages objects of them": {
			cluster: shopCluster, obj: object("v1", "ConfigMap", "shop-a", "settings")},
		"a cluster limited to namespaces refuses an object of another": {
			cluster: shopCluster, obj: object("v1", "ConfigMap", "web", "settings"),
			want: "ConfigMap web/settings: cluster shop is limited to namespaces shop-a, shop-b"},
		"a cluster limited to namespaces refuses cluster-scoped objects without clusterResources": {
			cluster: shopCluster, obj: object("v1", "Namespace", "", "shop-a"),
			want: "Namespace shop-a is cluster-scoped: cluster shop is limited to namespaces shop-a, shop-b"},
		"a cluster limited to namespaces with clusterResources manages cluster-scoped objects": {
			cluster: withClusterResources(shopCluster), obj: object("v1", "Namespace", "", "shop-a")},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := objectOutOfScope(scopeOf(tc.managed, tc.cluster), tc.obj); got != tc.want {
				t.Errorf("objectOutOfScope() = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestCacheOptions(t *testing.T) {
	tests := map[string]struct {
		cluster          clusters.Cluster
		namespaces       []string
		clusterResources bool
	}{
		"a cluster without limits is watched whole": {cluster: clusters.Cluster{Name: "east"}, clusterResources: true},
		"a cluster limited to namespaces is watched in them, without cluster-scoped kinds": {
			cluster: shopCluster, namespaces: []string{"shop-a", "shop-b"}},
		"a cluster limited to namespaces with clusterResources is watched in them and cluster-wide for cluster-scoped kinds": {
			cluster: withClusterResources(shopCluster), namespaces: []string{"shop-a", "shop-b"}, clusterResources: true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got := CacheOptions(tc.cluster, clustercache.Options{Health: health.StatusText})
			if !slices.Equal(got.Namespaces, tc.namespaces) || got.ClusterResources != tc.clusterResources || got.Health == nil {
				t.Errorf("CacheOptions(%v) = namespaces %v, clusterResources %v, health kept %v; want %v, %v, true",
					tc.cluster, got.Namespaces, got.ClusterResources, got.Health != nil, tc.namespaces, tc.clusterResources)
			}
		})
	}
}
