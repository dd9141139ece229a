package analysis

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"

	"github.com/skiffcd/skiff/api/v1alpha1"
)

// Masked replaces Secret argument values in messages.
const Masked = "*****"

var argTag = regexp.MustCompile(`\{\{\s*args\.([A-Za-z0-9_.-]+)\s*\}\}`)

// SubstituteString replaces every {{args.name}} in s with its value; an
// argument that is not in values is an error.
func SubstituteString(s string, values map[string]string) (string, error) {
	var missing []string
	out := argTag.ReplaceAllStringFunc(s, func(tag string) string {
		name := argTag.FindStringSubmatch(tag)[1]
		v, ok := values[name]
		if !ok {
			missing = append(missing, name)
			return tag
		}
		return v
	})
	if len(missing) > 0 {
		return "", fmt.Errorf("failed to resolve {{args.%s}}", missing[0])
	}
	return out, nil
}

// SubstituteMetric returns the metric with {{args.name}} replaced in every
// field, conditions and provider settings alike. It works on the JSON form,
// so values are escaped as JSON string content.
func SubstituteMetric(metric v1alpha1.Metric, values map[string]string) (v1alpha1.Metric, error) {
	raw, err := json.Marshal(metric)
	if err != nil {
		return metric, fmt.Errorf("encoding metric %q: %w", metric.Name, err)
	}
	escaped := make(map[string]string, len(values))
	for k, v := range values {
		quoted, _ := json.Marshal(v)
		escaped[k] = string(quoted[1 : len(quoted)-1])
	}
	text, err := SubstituteString(string(raw), escaped)
	if err != nil {
		return metric, fmt.Errorf("metric %q: %w", metric.Name, err)
	}
	var out v1alpha1.Metric
	if err := json.Unmarshal([]byte(text), &out); err != nil {
		return metric, fmt.Errorf("metric %q after substituting args: %w", metric.Name, err)
	}
	return out, nil
}

// SecretReader reads one key of a Secret in the run's namespace.
type SecretReader func(name, key string) (string, error)

// ResolvedArgs are a run's argument values; Secrets lists the values that
// came from Secrets, to mask wherever text is shown.
type ResolvedArgs struct {
	Values  map[string]string
	Secrets []string
}

// Mask replaces every Secret value in s.
func (a ResolvedArgs) Mask(s string) string {
	for _, secret := range a.Secrets {
		if secret != "" {
			s = strings.ReplaceAll(s, secret, Masked)
		}
	}
	return s
}

// ResolveArgs gives every argument of a run its value: value as written,
// valueFrom.secretKeyRef read through secrets. A fieldRef left in a run
// (its owner normally resolves it when creating the run) and an argument
// without a value are errors.
func ResolveArgs(args []v1alpha1.Argument, secrets SecretReader) (ResolvedArgs, error) {
	out := ResolvedArgs{Values: map[string]string{}}
	for _, arg := range args {
		switch {
		case arg.Value != nil:
			out.Values[arg.Name] = arg.Value.String()
		case arg.ValueFrom != nil && arg.ValueFrom.SecretKeyRef != nil:
			ref := arg.ValueFrom.SecretKeyRef
			if secrets == nil {
				return out, fmt.Errorf("args.%s: cannot read Secret %q", arg.Name, ref.Name)
			}
			v, err := secrets(ref.Name, ref.Key)
			if err != nil {
				return out, fmt.Errorf("args.%s: reading key %q of Secret %q: %w", arg.Name, ref.Key, ref.Name, err)
			}
			out.Values[arg.Name] = v
			out.Secrets = append(out.Secrets, v)
		case arg.ValueFrom != nil && arg.ValueFrom.FieldRef != nil:
			return out, fmt.Errorf("args.%s: fieldRef %q was not resolved by the run's owner", arg.Name, arg.ValueFrom.FieldRef.FieldPath)
		default:
			return out, fmt.Errorf("args.%s was not resolved", arg.Name)
		}
	}
	return out, nil
}

var fieldPathKey = regexp.MustCompile(`^metadata\.(labels|annotations)\['([^']*)'\]$`)

// ResolveFieldRef reads a fieldRef path from an object's metadata:
// metadata.name, metadata.namespace, metadata.uid, metadata.labels['k'] or
// metadata.annotations['k'].
func ResolveFieldRef(obj any, fieldPath string) (string, error) {
	accessor, err := meta.Accessor(obj)
	if err != nil {
		return "", fmt.Errorf("fieldRef %q: %w", fieldPath, err)
	}
	switch fieldPath {
	case "metadata.name":
		return accessor.GetName(), nil
	case "metadata.namespace":
		return accessor.GetNamespace(), nil
	case "metadata.uid":
		return string(accessor.GetUID()), nil
	}
	m := fieldPathKey.FindStringSubmatch(fieldPath)
	if m == nil {
		return "", fmt.Errorf("fieldRef %q is not supported; use metadata.name, metadata.namespace, metadata.uid, metadata.labels['key'] or metadata.annotations['key']", fieldPath)
	}
	values := accessor.GetLabels()
	if m[1] == "annotations" {
		values = accessor.GetAnnotations()
	}
	v, ok := values[m[2]]
	if !ok {
		return "", fmt.Errorf("fieldRef %q: the object has no such %s", fieldPath, strings.TrimSuffix(m[1], "s"))
	}
	return v, nil
}

// ResolveFieldRefs returns args with every valueFrom.fieldRef replaced by
// its value read from owner (the Rollout that creates the run).
func ResolveFieldRefs(args []v1alpha1.Argument, owner any) ([]v1alpha1.Argument, error) {
	out := make([]v1alpha1.Argument, len(args))
	for i, arg := range args {
		out[i] = *arg.DeepCopy()
		if arg.Value != nil || arg.ValueFrom == nil || arg.ValueFrom.FieldRef == nil {
			continue
		}
		v, err := ResolveFieldRef(owner, arg.ValueFrom.FieldRef.FieldPath)
		if err != nil {
			return nil, fmt.Errorf("args.%s: %w", arg.Name, err)
		}
		out[i].Value, out[i].ValueFrom = v1alpha1.NewAnyString(v), nil
	}
	return out, nil
}
