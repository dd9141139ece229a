package appops

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/skiffcd/skiff/internal/render"
)

// ScopeFunc reports whether obj's kind is namespaced; an error when the
// cluster does not serve the kind (yet). client.Client's
// IsObjectNamespaced is one.
type ScopeFunc func(obj runtime.Object) (bool, error)

// DefaultNamespaces gives each rendered object that is namespaced and
// names no namespace the destination namespace, and takes the namespace
// off cluster-scoped ones, in place. A kind the cluster does not serve
// takes the scope of a CustomResourceDefinition rendered with it (the sync
// creates the CRD first), and counts as namespaced otherwise. The
// controller's comparison and sync, the API's diffs and `skiff app diff`
// all place objects with it, so that they name the same objects.
func DefaultNamespaces(manifests []render.Manifest, namespace string, scope ScopeFunc) []*unstructured.Unstructured {
	crdScope := map[string]bool{} // group/Kind → namespaced, for CRDs rendered with their objects
	for _, m := range manifests {
		if m.Object.GetKind() == "CustomResourceDefinition" {
			group, _, _ := unstructured.NestedString(m.Object.Object, "spec", "group")
			kind, _, _ := unstructured.NestedString(m.Object.Object, "spec", "names", "kind")
			scope, _, _ := unstructured.NestedString(m.Object.Object, "spec", "scope")
			crdScope[group+"/"+kind] = scope != "Cluster"
		}
	}
	out := make([]*unstructured.Unstructured, 0, len(manifests))
	for _, m := range manifests {
		obj := m.Object
		namespaced, err := scope(obj)
		if err != nil {
			gvk := obj.GroupVersionKind()
			ns, known := crdScope[gvk.Group+"/"+gvk.Kind]
			namespaced = !known || ns
		}
		if namespaced && obj.GetNamespace() == "" {
			obj.SetNamespace(namespace)
		}
		if !namespaced {
			obj.SetNamespace("")
		}
		out = append(out, obj)
	}
	return out
}
