package diff

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"

	"github.com/itchyny/gojq"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/skiffcd/skiff/api/v1alpha1"
)

// RespectIgnores returns what a sync with Argo CD's
// RespectIgnoreDifferences=true option applies for desired: desired with
// every field the rules ignore taken from live. A field live has keeps
// live's value (so the apply neither changes it nor, owning it, removes
// it); a field only desired has is left out; fields that live's
// managedFieldsManagers own are left out (the apply does not own them, so
// leaving them out leaves them alone). A new object (live nil) is applied
// as git has it. desired is not changed.
func RespectIgnores(desired, live *unstructured.Unstructured, rules []v1alpha1.ResourceIgnoreDifferences) (*unstructured.Unstructured, error) {
	rules = matchingIgnores(desired, rules)
	if live == nil || len(rules) == 0 {
		return desired, nil
	}
	out := desired.DeepCopy()
	for _, r := range rules {
		for _, p := range r.JSONPointers {
			tokens, err := parsePointer(p)
			if err != nil {
				return nil, err
			}
			path := make([]any, len(tokens))
			for i, t := range tokens {
				path[i] = t
			}
			out.Object = takeFromLive(out.Object, live.Object, [][]any{path})
		}
		for _, expr := range r.JQPathExpressions {
			paths, err := jqPaths(expr, out.Object, live.Object)
			if err != nil {
				return nil, err
			}
			out.Object = takeFromLive(out.Object, live.Object, paths)
		}
	}
	return withoutManaged(out, live, rules)
}

// jqPaths lists the paths expr selects in either object.
func jqPaths(expr string, objs ...map[string]any) ([][]any, error) {
	q, err := gojq.Parse("path(" + expr + ")")
	if err != nil {
		return nil, fmt.Errorf("jq path expression %q: %w", expr, err)
	}
	code, err := gojq.Compile(q)
	if err != nil {
		return nil, fmt.Errorf("jq path expression %q: %w", expr, err)
	}
	var paths [][]any
	for _, o := range objs {
		it := code.Run(deepCopy(o))
		for {
			v, ok := it.Next()
			if !ok {
				break
			}
			// An expression that does not fit the object selects nothing
			// in it, as in comparisons (deleteJQ).
			p, isPath := v.([]any)
			if !isPath {
				break
			}
			paths = append(paths, p)
		}
	}
	return paths, nil
}

// takeFromLive sets each path of obj to live's value there, or removes it
// from obj when live has none. Removals go last, in reverse order, so the
// indexes of a list's later items stay right while earlier ones go.
func takeFromLive(obj, live map[string]any, paths [][]any) map[string]any {
	var missing [][]any
	for _, p := range paths {
		if v, ok := getPath(live, p); ok {
			setPath(obj, p, deepCopy(v))
		} else {
			missing = append(missing, p)
		}
	}
	slices.SortFunc(missing, comparePaths)
	for i := len(missing) - 1; i >= 0; i-- {
		removePointer(obj, pathTokens(missing[i]))
	}
	return obj
}

func getPath(v any, path []any) (any, bool) {
	for _, step := range path {
		switch t := v.(type) {
		case map[string]any:
			key, ok := step.(string)
			if !ok {
				return nil, false
			}
			if v, ok = t[key]; !ok {
				return nil, false
			}
		case []any:
			i, ok := index(step)
			if !ok || i < 0 || i >= len(t) {
				return nil, false
			}
			v = t[i]
		default:
			return nil, false
		}
	}
	return v, true
}

// setPath sets path in obj, making the maps on the way; a list item that
// obj lacks is not made (a list is desired's to shape).
func setPath(obj map[string]any, path []any, value any) {
	var cur any = obj
	for n, step := range path {
		last := n == len(path)-1
		switch t := cur.(type) {
		case map[string]any:
			key, ok := step.(string)
			if !ok {
				return
			}
			if last {
				t[key] = value
				return
			}
			next, ok := t[key]
			if !ok {
				if _, isIndex := index(path[n+1]); isIndex {
					return
				}
				next = map[string]any{}
				t[key] = next
			}
			cur = next
		case []any:
			i, ok := index(step)
			if !ok || i < 0 || i >= len(t) {
				return
			}
			if last {
				t[i] = value
				return
			}
			cur = t[i]
		default:
			return
		}
	}
}

func index(step any) (int, bool) {
	switch s := step.(type) {
	case int:
		return s, true
	case float64:
		return int(s), s == float64(int(s))
	case string:
		i, err := strconv.Atoi(s)
		return i, err == nil
	}
	return 0, false
}

func pathTokens(path []any) []string {
	tokens := make([]string, len(path))
	for i, s := range path {
		tokens[i] = fmt.Sprint(s)
	}
	return tokens
}

func comparePaths(a, b []any) int {
	for i := 0; i < len(a) && i < len(b); i++ {
		ai, aIdx := index(a[i])
		bi, bIdx := index(b[i])
		if aIdx && bIdx {
			if c := cmp.Compare(ai, bi); c != 0 {
				return c
			}
			continue
		}
		if c := cmp.Compare(fmt.Sprint(a[i]), fmt.Sprint(b[i])); c != 0 {
			return c
		}
	}
	return cmp.Compare(len(a), len(b))
}

// withoutManaged leaves out of obj the fields that the rules'
// managedFieldsManagers own in live.
func withoutManaged(obj, live *unstructured.Unstructured, rules []v1alpha1.ResourceIgnoreDifferences) (*unstructured.Unstructured, error) {
	managed := false
	for _, r := range rules {
		managed = managed || len(r.ManagedFieldsManagers) > 0
	}
	if !managed {
		return obj, nil
	}
	td, tl, err := toTyped(obj, normalize(live, false))
	if err != nil {
		return nil, err
	}
	td, _, err = removeManaged(td, tl, live, rules, FieldManager)
	if err != nil {
		return nil, err
	}
	return fromTyped(td)
}
