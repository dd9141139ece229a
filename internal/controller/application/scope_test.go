package application

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestDestinationOutOfScope(t *testing.T) {
	tests := map[string]struct {
		managed, dest string
		want          string
	}{
		"a cluster-wide install deploys anywhere":           {managed: "", dest: "shop"},
		"a namespaced install deploys to its own namespace": {managed: "argocd", dest: "argocd"},
		"a namespaced install refuses another namespace": {managed: "argocd", dest: "shop",
			want: `spec.destination.namespace "shop": this Skiff is a namespaced install and manages only namespace argocd`},
		"a namespaced install refuses an empty destination namespace": {managed: "argocd", dest: "",
			want: `spec.destination.namespace "": this Skiff is a namespaced install and manages only namespace argocd`},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := destinationOutOfScope(tc.managed, tc.dest); got != tc.want {
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
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := objectOutOfScope(tc.managed, tc.obj); got != tc.want {
				t.Errorf("objectOutOfScope() = %q, want %q", got, tc.want)
			}
		})
	}
}
