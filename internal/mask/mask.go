// Package mask hides Secret values wherever Skiff shows objects: command
// output, diffs, logs, the UI and notifications.
package mask

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Placeholder replaces every Secret value, as Argo CD shows them.
const Placeholder = "++++++++"

// Secret returns obj unchanged when it is not a core/v1 Secret, and otherwise
// a copy whose data and stringData values are replaced by Placeholder. The
// keys stay visible: which keys exist is not secret and helps debugging.
// The last-applied-configuration annotation, which repeats the values, is
// masked too.
func Secret(obj *unstructured.Unstructured) *unstructured.Unstructured {
	if obj == nil || obj.GetKind() != "Secret" || obj.GroupVersionKind().Group != "" {
		return obj
	}
	out := obj.DeepCopy()
	for _, field := range []string{"data", "stringData"} {
		values, ok := out.Object[field].(map[string]any)
		if !ok {
			continue
		}
		for k := range values {
			values[k] = Placeholder
		}
	}
	if ann := out.GetAnnotations(); ann != nil {
		if _, ok := ann["kubectl.kubernetes.io/last-applied-configuration"]; ok {
			ann["kubectl.kubernetes.io/last-applied-configuration"] = Placeholder
			out.SetAnnotations(ann)
		}
	}
	return out
}
