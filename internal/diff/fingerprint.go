package diff

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/skiffcd/skiff/api/v1alpha1"
)

// UpdateFingerprint returns a digest of obj without the fields the rules
// ignore (argocd-cm's ignoreResourceUpdates) and without
// metadata.resourceVersion, generation and managedFields, which Argo CD
// always leaves out: two versions of an object with one fingerprint differ
// in ignored fields only. obj is not changed.
func UpdateFingerprint(obj *unstructured.Unstructured, rules []v1alpha1.ResourceIgnoreDifferences) (string, error) {
	rules = matchingIgnores(obj, rules)
	o, err := withoutManaged(obj.DeepCopy(), obj, rules)
	if err != nil {
		return "", fmt.Errorf("ignoring managed fields of %s: %w", describe(obj), err)
	}
	for _, f := range []string{"resourceVersion", "generation", "managedFields"} {
		unstructured.RemoveNestedField(o.Object, "metadata", f)
	}
	if err := applyIgnores(o, nil, rules); err != nil {
		return "", fmt.Errorf("ignoring fields of %s: %w", describe(obj), err)
	}
	raw, err := json.Marshal(o.Object)
	if err != nil {
		return "", fmt.Errorf("encoding %s: %w", describe(obj), err)
	}
	sum := sha256.Sum256(raw)
	return string(sum[:]), nil
}
