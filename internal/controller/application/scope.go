package application

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// destinationOutOfScope says why a namespaced install, which manages only
// namespace managed (skiff server --namespaced), cannot deploy to the
// destination namespace dest; "" when it can, and always for a
// cluster-wide install (managed "").
func destinationOutOfScope(managed, dest string) string {
	if managed == "" || dest == managed {
		return ""
	}
	return fmt.Sprintf("spec.destination.namespace %q: this Skiff is a namespaced install and manages only namespace %s", dest, managed)
}

// objectOutOfScope says why a namespaced install, which manages only
// namespace managed, cannot manage obj, placed by appops.DefaultNamespaces
// (so a cluster-scoped object has no namespace); "" when it can, and
// always for a cluster-wide install (managed "").
func objectOutOfScope(managed string, obj *unstructured.Unstructured) string {
	ns := obj.GetNamespace()
	if managed == "" || ns == managed {
		return ""
	}
	gvk := obj.GroupVersionKind()
	kind := gvk.Kind
	if gvk.Group != "" {
		kind = gvk.Group + "/" + gvk.Kind
	}
	if ns == "" {
		return fmt.Sprintf("%s %s is cluster-scoped: this Skiff is a namespaced install and manages only namespace %s", kind, obj.GetName(), managed)
	}
	return fmt.Sprintf("%s %s/%s: this Skiff is a namespaced install and manages only namespace %s", kind, ns, obj.GetName(), managed)
}
