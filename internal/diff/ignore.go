package diff

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/gobwas/glob"
	"github.com/itchyny/gojq"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	"sigs.k8s.io/structured-merge-diff/v6/typed"

	"github.com/skiffcd/skiff/api/v1alpha1"
)

// matchingIgnores returns the rules that apply to obj. Group and kind may be
// globs such as "*"; name and namespace, when set, must match exactly.
func matchingIgnores(obj *unstructured.Unstructured, rules []v1alpha1.ResourceIgnoreDifferences) []v1alpha1.ResourceIgnoreDifferences {
	gvk := obj.GroupVersionKind()
	var out []v1alpha1.ResourceIgnoreDifferences
	for _, r := range rules {
		if !globMatch(r.Group, gvk.Group) || !globMatch(r.Kind, gvk.Kind) {
			continue
		}
		if r.Name != "" && r.Name != obj.GetName() {
			continue
		}
		if r.Namespace != "" && r.Namespace != obj.GetNamespace() {
			continue
		}
		out = append(out, r)
	}
	return out
}

func globMatch(pattern, s string) bool {
	if pattern == s {
		return true
	}
	if !strings.ContainsAny(pattern, "*?[{") {
		return false
	}
	g, err := glob.Compile(pattern)
	return err == nil && g.Match(s)
}

// applyIgnores removes the fields named by jsonPointers and jqPathExpressions
// from both objects (live may be nil).
func applyIgnores(d, l *unstructured.Unstructured, rules []v1alpha1.ResourceIgnoreDifferences) error {
	for _, r := range rules {
		for _, p := range r.JSONPointers {
			tokens, err := parsePointer(p)
			if err != nil {
				return err
			}
			for _, o := range []*unstructured.Unstructured{d, l} {
				if o != nil {
					removePointer(o.Object, tokens)
				}
			}
		}
		for _, expr := range r.JQPathExpressions {
			code, err := compileJQ(expr)
			if err != nil {
				return err
			}
			for _, o := range []*unstructured.Unstructured{d, l} {
				if o != nil {
					o.Object = deleteJQ(code, o.Object)
				}
			}
		}
	}
	return nil
}

// parsePointer splits an RFC 6901 JSON pointer into unescaped tokens.
func parsePointer(p string) ([]string, error) {
	if p == "" {
		return nil, nil
	}
	if !strings.HasPrefix(p, "/") {
		return nil, fmt.Errorf("json pointer %q: must start with /", p)
	}
	tokens := strings.Split(p[1:], "/")
	for i, t := range tokens {
		tokens[i] = strings.ReplaceAll(strings.ReplaceAll(t, "~1", "/"), "~0", "~")
	}
	return tokens, nil
}

// removePointer deletes the value at tokens, if present, and returns v. The
// whole document (no tokens) is never removed.
func removePointer(v any, tokens []string) any {
	if len(tokens) == 0 {
		return v
	}
	switch t := v.(type) {
	case map[string]any:
		if _, ok := t[tokens[0]]; !ok {
			return v
		}
		if len(tokens) == 1 {
			delete(t, tokens[0])
		} else {
			t[tokens[0]] = removePointer(t[tokens[0]], tokens[1:])
		}
	case []any:
		i, err := strconv.Atoi(tokens[0])
		if err != nil || i < 0 || i >= len(t) {
			return v
		}
		if len(tokens) == 1 {
			return slices.Delete(t, i, i+1)
		}
		t[i] = removePointer(t[i], tokens[1:])
	}
	return v
}

func compileJQ(expr string) (*gojq.Code, error) {
	q, err := gojq.Parse("del(" + expr + ")")
	if err != nil {
		return nil, fmt.Errorf("jq path expression %q: %w", expr, err)
	}
	code, err := gojq.Compile(q)
	if err != nil {
		return nil, fmt.Errorf("jq path expression %q: %w", expr, err)
	}
	return code, nil
}

// deleteJQ deletes the paths code selects. An expression that does not fit
// the object (say, iterating a list the object lacks) removes nothing, as
// such a rule is commonly written for a field only some objects have.
func deleteJQ(code *gojq.Code, obj map[string]any) map[string]any {
	it := code.Run(deepCopy(obj))
	v, ok := it.Next()
	if !ok {
		return obj
	}
	if _, isErr := v.(error); isErr {
		return obj
	}
	m, ok := v.(map[string]any)
	if !ok {
		return obj
	}
	out, _ := normalizeValue(m, "", false).(map[string]any)
	if out == nil {
		out = map[string]any{}
	}
	return out
}

// removeManaged drops from both typed objects the fields that the managers
// named by managedFieldsManagers own in live. Only leaf fields are taken, so
// owning a map's existence does not hide fields others set inside it; self,
// Skiff's own manager, is skipped, as ignoring it would hide every change.
func removeManaged(td, tl *typed.TypedValue, live *unstructured.Unstructured, rules []v1alpha1.ResourceIgnoreDifferences, self string) (*typed.TypedValue, *typed.TypedValue, error) {
	var managers []string
	for _, r := range rules {
		managers = append(managers, r.ManagedFieldsManagers...)
	}
	if len(managers) == 0 {
		return td, tl, nil
	}
	owned := &fieldpath.Set{}
	for _, e := range live.GetManagedFields() {
		if e.Manager == self || !slices.Contains(managers, e.Manager) || e.FieldsV1 == nil {
			continue
		}
		s := &fieldpath.Set{}
		if err := s.FromJSON(e.FieldsV1.GetRawReader()); err != nil {
			return nil, nil, fmt.Errorf("reading managed fields of %s: %w", e.Manager, err)
		}
		owned = owned.Union(s)
	}
	if owned.Empty() {
		return td, tl, nil
	}
	leaves := owned.Leaves()
	return td.RemoveItems(leaves), tl.RemoveItems(leaves), nil
}
