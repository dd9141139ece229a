package diff

import (
	"fmt"
	"reflect"

	"github.com/pmezard/go-difflib/difflib"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/skiffcd/skiff/internal/mask"
)

// changedMask marks a Secret value that differs from live, so the diff shows
// that it changed without showing either value.
const changedMask = mask.Placeholder + " (changed)"

// render builds the Result shown to users from the normalized, unmasked
// predicted and live objects (live may be nil when missing). Modification
// is decided by the caller before masking, so masked values cannot hide it.
func render(desired, live *unstructured.Unstructured, modified bool) (Result, error) {
	res := Result{
		Modified: modified,
		Desired:  masked(desired, live),
		Live:     masked(live, nil),
	}
	if !modified {
		return res, nil
	}
	d, err := unified(res.Live, res.Desired)
	if err != nil {
		return Result{}, err
	}
	res.Diff = d
	return res, nil
}

// masked returns obj with Secret values masked; values that differ from
// against are masked distinctly.
func masked(obj, against *unstructured.Unstructured) *unstructured.Unstructured {
	if obj == nil {
		return nil
	}
	out := mask.Secret(obj)
	if out == obj || against == nil {
		return out
	}
	data, _ := out.Object["data"].(map[string]any)
	want, _ := obj.Object["data"].(map[string]any)
	have, _ := against.Object["data"].(map[string]any)
	for k, v := range want {
		if hv, ok := have[k]; ok && !reflect.DeepEqual(v, hv) {
			data[k] = changedMask
		}
	}
	return out
}

// unified renders a unified diff of the YAML of both objects. YAML keys are
// sorted, so the output is stable.
func unified(live, desired *unstructured.Unstructured) (string, error) {
	a, err := toYAML(live)
	if err != nil {
		return "", err
	}
	b, err := toYAML(desired)
	if err != nil {
		return "", err
	}
	text, err := difflib.GetUnifiedDiffString(difflib.UnifiedDiff{
		A:        difflib.SplitLines(a),
		B:        difflib.SplitLines(b),
		FromFile: "live",
		ToFile:   "desired",
		Context:  3,
	})
	if err != nil {
		return "", fmt.Errorf("rendering diff: %w", err)
	}
	return text, nil
}

func toYAML(obj *unstructured.Unstructured) (string, error) {
	if obj == nil {
		return "", nil
	}
	b, err := yaml.Marshal(obj.Object)
	if err != nil {
		return "", fmt.Errorf("rendering %s: %w", describe(obj), err)
	}
	return string(b), nil
}

// alignLists reorders lists of named items in predicted to live's order.
// Merging keeps desired's order, but order within keyed lists is not a
// difference, and showing it would clutter the diff.
func alignLists(predicted, live map[string]any) {
	for k, pv := range predicted {
		switch p := pv.(type) {
		case map[string]any:
			if l, ok := live[k].(map[string]any); ok {
				alignLists(p, l)
			}
		case []any:
			l, ok := live[k].([]any)
			if !ok {
				continue
			}
			pIdx, lIdx := namesOf(p), namesOf(l)
			if pIdx == nil || lIdx == nil {
				continue
			}
			ordered := make([]any, 0, len(p))
			for _, li := range l {
				name := li.(map[string]any)["name"]
				if i, ok := pIdx[name]; ok {
					alignLists(p[i].(map[string]any), li.(map[string]any))
					ordered = append(ordered, p[i])
				}
			}
			for _, pi := range p {
				if _, ok := lIdx[pi.(map[string]any)["name"]]; !ok {
					ordered = append(ordered, pi)
				}
			}
			predicted[k] = ordered
		}
	}
}

// namesOf indexes a list whose items are all maps with distinct names, and
// returns nil for any other list.
func namesOf(list []any) map[any]int {
	idx := make(map[any]int, len(list))
	for i, item := range list {
		m, ok := item.(map[string]any)
		if !ok {
			return nil
		}
		name, ok := m["name"].(string)
		if !ok {
			return nil
		}
		if _, dup := idx[name]; dup {
			return nil
		}
		idx[name] = i
	}
	return idx
}
