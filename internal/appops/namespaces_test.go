package appops

import (
	"errors"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"

	"github.com/skiffcd/skiff/internal/render"
)

// servedScopes is a cluster that serves ConfigMaps (namespaced) and
// Namespaces (cluster-scoped) and nothing else.
func servedScopes(obj runtime.Object) (bool, error) {
	switch obj.GetObjectKind().GroupVersionKind().Kind {
	case "ConfigMap":
		return true, nil
	case "Namespace", "CustomResourceDefinition":
		return false, nil
	}
	return false, errors.New("no matches for kind")
}

func manifest(t *testing.T, doc string) render.Manifest {
	t.Helper()
	obj := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(doc), &obj.Object); err != nil {
		t.Fatal(err)
	}
	return render.Manifest{Object: obj}
}

const (
	namespacedCRD = "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: widgets.example.com}\n" +
		"spec: {group: example.com, scope: Namespaced, names: {kind: Widget, plural: widgets}}"
	clusterCRD = "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: gadgets.example.com}\n" +
		"spec: {group: example.com, scope: Cluster, names: {kind: Gadget, plural: gadgets}}"
)

func TestDefaultNamespaces(t *testing.T) {
	tests := map[string]struct {
		docs []string
		// want is each object's namespace afterwards, in order.
		want []string
	}{
		"a namespaced object without a namespace gets the destination's": {
			docs: []string{"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}"},
			want: []string{"shop"},
		},
		"a namespaced object keeps its own namespace": {
			docs: []string{"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, namespace: other}"},
			want: []string{"other"},
		},
		"a cluster-scoped object loses a namespace it names": {
			docs: []string{"apiVersion: v1\nkind: Namespace\nmetadata: {name: a, namespace: shop}"},
			want: []string{""},
		},
		"a custom resource of a namespaced CRD rendered with it gets the destination's": {
			docs: []string{namespacedCRD, "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w}"},
			want: []string{"", "shop"},
		},
		"a custom resource of a cluster-scoped CRD rendered with it gets none": {
			docs: []string{"apiVersion: example.com/v1\nkind: Gadget\nmetadata: {name: g, namespace: shop}", clusterCRD},
			want: []string{"", ""},
		},
		"a kind neither served nor rendered counts as namespaced": {
			docs: []string{"apiVersion: example.com/v1\nkind: Unknown\nmetadata: {name: u}"},
			want: []string{"shop"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			var manifests []render.Manifest
			for _, doc := range tc.docs {
				manifests = append(manifests, manifest(t, doc))
			}
			objs := DefaultNamespaces(manifests, "shop", servedScopes)
			if len(objs) != len(tc.want) {
				t.Fatalf("%d objects, want %d", len(objs), len(tc.want))
			}
			for i, obj := range objs {
				if obj.GetNamespace() != tc.want[i] {
					t.Errorf("%s %s: namespace %q, want %q", obj.GetKind(), obj.GetName(), obj.GetNamespace(), tc.want[i])
				}
				if obj != manifests[i].Object {
					t.Errorf("%s %s is not the rendered object, changed in place", obj.GetKind(), obj.GetName())
				}
			}
		})
	}
}
