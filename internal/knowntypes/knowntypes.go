// Package knowntypes names the Kubernetes API types a custom resource's
// field may hold, as argocd-cm's knownTypeFields names them
// ("core/v1/PodSpec", "apps/v1/DeploymentSpec", "core/v1/ResourceList",
// "core/Quantity", "meta/v1/Duration"), and rewrites a field's value in
// that type's canonical JSON: what decoding and encoding it as the typed
// Go value gives, as the API server would store it (quantities in one
// spelling, durations as Go prints them, unknown fields dropped).
//
// The names are those of Argo CD: <group>/<version>/<Type> for the types
// of k8s.io/api's packages, with "core" for the core group, meta/v1/<Type>
// for apimachinery's meta types, and core/Quantity. They are found by
// walking every type reachable from client-go's scheme, once.
package knowntypes

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes/scheme"
)

const (
	apiPrefix  = "k8s.io/api/"
	metaPrefix = "k8s.io/apimachinery/pkg/apis/"
)

// registry is every known type by name, made once.
var registry = sync.OnceValue(func() map[string]reflect.Type {
	// Named by Argo CD, or used by CRDs and by no built-in kind.
	types := map[string]reflect.Type{
		"core/Quantity":    reflect.TypeFor[resource.Quantity](),
		"meta/v1/Duration": reflect.TypeFor[metav1.Duration](),
	}
	seen := map[reflect.Type]bool{}
	var walk func(t reflect.Type)
	walk = func(t reflect.Type) {
		if seen[t] {
			return
		}
		seen[t] = true
		if name, ok := nameOf(t); ok {
			types[name] = t
		}
		switch t.Kind() {
		case reflect.Pointer, reflect.Slice, reflect.Array:
			walk(t.Elem())
		case reflect.Map:
			walk(t.Key())
			walk(t.Elem())
		case reflect.Struct:
			for i := range t.NumField() {
				walk(t.Field(i).Type)
			}
		}
	}
	for _, t := range scheme.Scheme.AllKnownTypes() {
		walk(t)
	}
	return types
})

// nameOf is Argo CD's name of t, when t is a named type of an API package.
func nameOf(t reflect.Type) (string, bool) {
	if t.Name() == "" {
		return "", false
	}
	pkg := t.PkgPath()
	for _, prefix := range []string{apiPrefix, metaPrefix} {
		if rest, ok := strings.CutPrefix(pkg, prefix); ok {
			return rest + "/" + t.Name(), true
		}
	}
	return "", false
}

// Field is a field of the custom resources of one kind whose value is of a
// known type: argocd-cm's resource.customizations.knownTypeFields.<group_kind>.
type Field struct {
	Group, Kind string
	// Field is the dotted path of the field ("spec.template.spec").
	Field string
	// Type is the name of a known type ("core/v1/PodSpec").
	Type string
}

// Known reports whether name is a known type.
func Known(name string) bool {
	_, ok := registry()[name]
	return ok
}

// Normalize rewrites the value of field (a dotted path such as
// "spec.template.spec"; a list on the way applies the rest of the path to
// each of its elements) of obj, in place, in the canonical JSON of type
// typeName. An absent field is left alone; an unknown type or a value
// that is not of the type is an error.
func Normalize(obj map[string]any, field, typeName string) error {
	t, ok := registry()[typeName]
	if !ok {
		return fmt.Errorf("%s is not a known Kubernetes type", typeName)
	}
	if err := normalizeAt(obj, strings.Split(field, "."), t); err != nil {
		return fmt.Errorf("field %s as %s: %w", field, typeName, err)
	}
	return nil
}

// normalizeAt is Argo CD's walk: the first list on path gets the rest of
// path applied to each of its elements.
func normalizeAt(obj map[string]any, path []string, t reflect.Type) error {
	for i := range path {
		v, found, _ := unstructured.NestedFieldNoCopy(obj, path[:i+1]...)
		if !found {
			return nil
		}
		items, ok := v.([]any)
		if !ok {
			continue
		}
		rest := path[i+1:]
		for j, item := range items {
			if len(rest) == 0 {
				n, err := remarshal(item, t)
				if err != nil {
					return err
				}
				items[j] = n
				continue
			}
			if m, ok := item.(map[string]any); ok {
				if err := normalizeAt(m, rest, t); err != nil {
					return err
				}
			}
		}
		return nil
	}
	v, found, _ := unstructured.NestedFieldNoCopy(obj, path...)
	if !found {
		return nil
	}
	n, err := remarshal(v, t)
	if err != nil {
		return err
	}
	return unstructured.SetNestedField(obj, n, path...)
}

// remarshal is v decoded as a t and encoded again, as JSON-like values.
func remarshal(v any, t reflect.Type) (any, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	typed := reflect.New(t).Interface()
	if err := json.Unmarshal(data, typed); err != nil {
		return nil, err
	}
	if data, err = json.Marshal(typed); err != nil {
		return nil, err
	}
	var out any
	if err := json.Unmarshal(data, &out); err != nil {
		return nil, err
	}
	return out, nil
}
