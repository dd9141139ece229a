package appcli

import (
	"fmt"
	"io"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/skiffcd/skiff/internal/appops"
	"github.com/skiffcd/skiff/internal/mask"
)

// WriteDiffs prints diffs as `argocd app diff` does.
func WriteDiffs(w io.Writer, diffs []appops.ResourceDiff) {
	for _, d := range diffs {
		fmt.Fprintf(w, "\n===== %s/%s %s ======\n%s", d.Group, d.Kind, appops.QualifiedName(d.Namespace, d.Name), d.Diff)
	}
}

// WriteManifests prints objects as a YAML stream, Secret values masked
// unless showSecrets.
func WriteManifests(w io.Writer, objs []*unstructured.Unstructured, showSecrets bool) error {
	for _, obj := range objs {
		if !showSecrets {
			obj = mask.Secret(obj)
		}
		data, err := yaml.Marshal(obj.Object)
		if err != nil {
			return fmt.Errorf("printing %s %s: %w", obj.GetKind(), obj.GetName(), err)
		}
		fmt.Fprintf(w, "---\n%s", data)
	}
	return nil
}
