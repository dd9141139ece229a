package diff

import (
	"encoding/base64"
	"fmt"
	"math"
	"strconv"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/skiffcd/skiff/internal/knowntypes"
)

// Annotations that record how an object was applied rather than what it
// should be; they differ between desired and live by design.
var ignoredAnnotations = []string{
	"kubectl.kubernetes.io/last-applied-configuration",
	"argocd.argoproj.io/tracking-id",
}

// Metadata the API server owns.
var serverMetadata = []string{
	"managedFields", "resourceVersion", "uid", "generation", "creationTimestamp",
	"selfLink", "deletionTimestamp", "deletionGracePeriodSeconds",
}

// Maps whose values are resource quantities, wherever they appear
// (container resources, ResourceQuota hard, PV capacity, pod overhead ...).
var quantityMaps = map[string]bool{
	"requests": true, "limits": true, "hard": true, "capacity": true,
	"allocatable": true, "overhead": true,
}

// Fields that hold a single quantity.
var quantityFields = map[string]bool{"storage": true, "sizeLimit": true}

// normalize returns a copy of obj in the form both sides are compared in:
// without status and server-owned metadata, with numbers as int64 where
// integral, quantities in one canonical spelling, Secret stringData folded
// into data, and empty or null values dropped, since an empty desired value
// and an absent live one mean the same.
func normalize(obj *unstructured.Unstructured, desired bool) *unstructured.Unstructured {
	m, _ := normalizeValue(deepCopy(obj.Object), "", false).(map[string]any)
	if m == nil {
		m = map[string]any{}
	}
	out := &unstructured.Unstructured{Object: m}
	delete(out.Object, "status")
	if md, ok := out.Object["metadata"].(map[string]any); ok {
		for _, f := range serverMetadata {
			delete(md, f)
		}
		if ann, ok := md["annotations"].(map[string]any); ok {
			for _, a := range ignoredAnnotations {
				delete(ann, a)
			}
			if len(ann) == 0 {
				delete(md, "annotations")
			}
		}
		if len(md) == 0 {
			delete(out.Object, "metadata")
		}
	}
	if desired && isSecret(out) {
		foldStringData(out.Object)
	}
	return out
}

func isSecret(o *unstructured.Unstructured) bool {
	return o.GetKind() == "Secret" && o.GroupVersionKind().Group == ""
}

// foldStringData moves stringData into data as the API server does, so a
// Secret written with stringData compares equal to its stored form.
func foldStringData(obj map[string]any) {
	sd, ok := obj["stringData"].(map[string]any)
	if !ok {
		return
	}
	data, _ := obj["data"].(map[string]any)
	if data == nil {
		data = map[string]any{}
	}
	for k, v := range sd {
		if s, ok := v.(string); ok {
			data[k] = base64.StdEncoding.EncodeToString([]byte(s))
		}
	}
	delete(obj, "stringData")
	if len(data) > 0 {
		obj["data"] = data
	}
}

// normalizeValue rewrites v in place where it can and returns the result, or
// nil when v is empty. key is the field v sits in; inQuantities is set when v
// is a value of a quantity map.
func normalizeValue(v any, key string, inQuantities bool) any {
	switch t := v.(type) {
	case map[string]any:
		for k, c := range t {
			n := normalizeValue(c, k, quantityMaps[key])
			if n == nil {
				delete(t, k)
				continue
			}
			t[k] = n
		}
		if len(t) == 0 {
			return nil
		}
		return t
	case []any:
		if len(t) == 0 {
			return nil
		}
		for i, c := range t {
			// An empty element is still an element: keep the list length.
			if n := normalizeValue(c, "", false); n != nil {
				t[i] = n
			}
		}
		return t
	case nil:
		return nil
	}
	v = normalizeNumber(v)
	if inQuantities || quantityFields[key] {
		if q, ok := canonicalQuantity(v); ok {
			return q
		}
	}
	return v
}

// normalizeNumber turns every JSON number into int64 when integral, so that
// 3, int64(3) and 3.0 compare equal.
func normalizeNumber(v any) any {
	switch n := v.(type) {
	case int:
		return int64(n)
	case int32:
		return int64(n)
	case float32:
		return normalizeNumber(float64(n))
	case float64:
		if n == math.Trunc(n) && math.Abs(n) < 1<<53 {
			return int64(n)
		}
	}
	return v
}

// canonicalQuantity spells a quantity one way per value, so 1Gi and
// 1073741824, or 0.5 and 500m, become the same string: whole multiples of
// 1024 in binary SI (as memory is usually written), all else in decimal SI.
func canonicalQuantity(v any) (string, bool) {
	var q resource.Quantity
	switch n := v.(type) {
	case string:
		p, err := resource.ParseQuantity(n)
		if err != nil {
			return "", false
		}
		q = p
	case int64:
		q = *resource.NewQuantity(n, resource.DecimalSI)
	case float64:
		p, err := resource.ParseQuantity(formatFloat(n))
		if err != nil {
			return "", false
		}
		q = p
	default:
		return "", false
	}
	format := resource.DecimalSI
	if v, ok := q.AsInt64(); ok && v != 0 && v%1024 == 0 {
		format = resource.BinarySI
	}
	return resource.NewDecimalQuantity(*q.AsDec(), format).String(), true
}

func formatFloat(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

// deepCopy copies maps and lists of any JSON-like tree; unlike
// runtime.DeepCopyJSON it accepts every number type callers may build.
func deepCopy(v any) any {
	switch t := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(t))
		for k, c := range t {
			m[k] = deepCopy(c)
		}
		return m
	case []any:
		l := make([]any, len(t))
		for i, c := range t {
			l[i] = deepCopy(c)
		}
		return l
	}
	return v
}

// withKnownTypes returns obj with the fields fields names for its kind in
// their known type's canonical JSON (a copy), or obj itself when none
// applies. A value that is not of its type is an error naming the object.
func withKnownTypes(obj *unstructured.Unstructured, fields []knowntypes.Field) (*unstructured.Unstructured, error) {
	gk := obj.GroupVersionKind().GroupKind()
	var out *unstructured.Unstructured
	for _, f := range fields {
		if f.Group != gk.Group || f.Kind != gk.Kind {
			continue
		}
		if out == nil {
			m, _ := deepCopy(obj.Object).(map[string]any)
			out = &unstructured.Unstructured{Object: m}
		}
		if err := knowntypes.Normalize(out.Object, f.Field, f.Type); err != nil {
			return nil, fmt.Errorf("knownTypeFields of %s: %w", describe(obj), err)
		}
	}
	if out == nil {
		return obj, nil
	}
	return out, nil
}
