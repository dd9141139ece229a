// Package diff decides whether a live Kubernetes object differs from the
// desired manifest, the way a server-side apply by Skiff would see it, and
// renders a masked, stable unified diff of the difference.
package diff

import (
	"errors"
	"fmt"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/client-go/applyconfigurations"
	"k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/structured-merge-diff/v6/typed"

	"github.com/skiffcd/skiff/api/v1alpha1"
	"github.com/skiffcd/skiff/internal/knowntypes"
	"github.com/skiffcd/skiff/internal/rollout"
)

// FieldManager is the server-side apply field manager Skiff applies as.
const FieldManager = "skiff"

// Options tunes a comparison.
type Options struct {
	// IgnoreDifferences leaves matching fields out of the comparison.
	IgnoreDifferences []v1alpha1.ResourceIgnoreDifferences
	// Manager is the field manager Skiff applies as; empty means FieldManager.
	Manager string
	// Schemas gives custom resources' defaults; nil means those of the
	// CRDs Skiff ships only.
	Schemas Schemas
	// KnownTypeFields are fields of custom resources whose values are of
	// known Kubernetes types (argocd-cm's knownTypeFields): both sides
	// are compared in that type's canonical JSON (see knowntypes).
	KnownTypeFields []knowntypes.Field
}

func (o Options) manager() string {
	if o.Manager == "" {
		return FieldManager
	}
	return o.Manager
}

// Result is the outcome of a comparison.
type Result struct {
	// Modified reports that applying desired would change live.
	Modified bool
	// Desired is the predicted live object after applying desired (live with
	// desired's fields merged in), normalized and with Secret values masked.
	// Showing the prediction rather than the manifest keeps server defaults
	// and other managers' fields out of the diff.
	Desired *unstructured.Unstructured
	// Live is the normalized live object with Secret values masked.
	Live *unstructured.Unstructured
	// Diff is a unified diff from Live to Desired; empty when not Modified.
	Diff string
}

// Compare reports whether live differs in any field desired sets. Lists are
// matched by their merge keys for built-in kinds (taken from the same schema
// the API server uses for server-side apply) and compared atomically for
// kinds without a known schema. A nil live object is missing, so Modified;
// a nil desired object is extraneous, which the caller decides about.
func Compare(desired, live *unstructured.Unstructured, opts Options) (Result, error) {
	switch {
	case desired == nil && live == nil:
		return Result{}, nil
	case desired == nil:
		l := normalize(live, false)
		return Result{Live: masked(l, nil)}, nil
	case live == nil:
		d := normalize(desired, true)
		if err := applyIgnores(d, nil, matchingIgnores(desired, opts.IgnoreDifferences)); err != nil {
			return Result{}, err
		}
		return render(d, nil, true)
	}

	tl, merged, same, err := compareTyped(desired, live, opts)
	if err != nil {
		return Result{}, err
	}
	return renderTyped(merged, tl, !same)
}

// renderTyped builds the Result shown to users from the typed predicted
// and live objects, their lists in the same order.
func renderTyped(predicted, live *typed.TypedValue, modified bool) (Result, error) {
	predictedOut, err := fromTyped(predicted)
	if err != nil {
		return Result{}, err
	}
	liveOut, err := fromTyped(live)
	if err != nil {
		return Result{}, err
	}
	alignLists(predictedOut.Object, liveOut.Object)
	return render(predictedOut, liveOut, modified)
}

// Modified reports what Compare's Result.Modified does, without building
// the objects and the diff shown to users: the controller's comparisons and
// syncs need only the verdict.
func Modified(desired, live *unstructured.Unstructured, opts Options) (bool, error) {
	switch {
	case desired == nil:
		return false, nil
	case live == nil:
		err := applyIgnores(normalize(desired, true), nil, matchingIgnores(desired, opts.IgnoreDifferences))
		return err == nil, err
	}
	_, _, same, err := compareTyped(desired, live, opts)
	return err == nil && !same, err
}

// compareTyped merges desired into live, both normalized and with the
// ignored fields left out, and reports whether the merge changed live.
func compareTyped(desired, live *unstructured.Unstructured, opts Options) (tl, merged *typed.TypedValue, same bool, err error) {
	dk, err := withKnownTypes(desired, opts.KnownTypeFields)
	if err != nil {
		return nil, nil, false, err
	}
	lk, err := withKnownTypes(live, opts.KnownTypeFields)
	if err != nil {
		return nil, nil, false, err
	}
	d := normalize(dk, true)
	l := normalize(lk, false)
	rollout.KeepServiceSelector(d, l)
	rules := matchingIgnores(desired, opts.IgnoreDifferences)
	if err := applyIgnores(d, l, rules); err != nil {
		return nil, nil, false, err
	}
	td, tl, err := toTyped(d, l)
	if err != nil {
		return nil, nil, false, err
	}
	if td, tl, err = removeManaged(td, tl, live, rules, opts.manager()); err != nil {
		return nil, nil, false, err
	}
	merged, err = tl.Merge(td)
	if err != nil {
		return nil, nil, false, fmt.Errorf("merging desired into live %s: %w", describe(desired), err)
	}
	if s := defaultsFor(desired.GroupVersionKind(), opts); s != nil {
		if merged, err = withDefaults(merged, s); err != nil {
			return nil, nil, false, fmt.Errorf("filling in the defaults of %s: %w", describe(desired), err)
		}
	}
	cmp, err := tl.Compare(merged)
	if err != nil {
		return nil, nil, false, fmt.Errorf("comparing %s: %w", describe(desired), err)
	}
	return tl, merged, cmp.IsSame(), nil
}

// IgnoreExtraneous reports whether obj asks, through Argo CD's compare-options
// annotation, not to count it when it is extraneous.
func IgnoreExtraneous(obj *unstructured.Unstructured) bool {
	if obj == nil {
		return false
	}
	for _, opt := range strings.Split(obj.GetAnnotations()["argocd.argoproj.io/compare-options"], ",") {
		if strings.TrimSpace(opt) == "IgnoreExtraneous" {
			return true
		}
	}
	return false
}

var (
	// schemaConverter knows the built-in kinds with the schema the API server
	// uses for server-side apply; built on first use, as parsing it is costly.
	schemaConverter = sync.OnceValue(func() managedfields.TypeConverter {
		return applyconfigurations.NewTypeConverter(scheme.Scheme)
	})
	deducedConverter = managedfields.NewDeducedTypeConverter()
)

// toTyped reads both objects with the built-in schema when both fit it, so
// lists are matched by merge key, and with the deduced schema (atomic lists)
// otherwise: for custom resources, and for built-in objects carrying fields
// this client-go version does not know.
func toTyped(d, l *unstructured.Unstructured) (*typed.TypedValue, *typed.TypedValue, error) {
	if td, tl, err := toTypedWith(schemaConverter(), d, l); err == nil {
		return td, tl, nil
	}
	return toTypedWith(deducedConverter, d, l)
}

func toTypedWith(tc managedfields.TypeConverter, d, l *unstructured.Unstructured) (*typed.TypedValue, *typed.TypedValue, error) {
	td, err := tc.ObjectToTyped(d, typed.AllowDuplicates)
	if err != nil {
		return nil, nil, fmt.Errorf("reading desired %s: %w", describe(d), err)
	}
	tl, err := tc.ObjectToTyped(l, typed.AllowDuplicates)
	if err != nil {
		return nil, nil, fmt.Errorf("reading live %s: %w", describe(l), err)
	}
	return td, tl, nil
}

func fromTyped(tv *typed.TypedValue) (*unstructured.Unstructured, error) {
	obj, err := deducedConverter.TypedToObject(tv)
	if err != nil {
		return nil, fmt.Errorf("converting merged object: %w", err)
	}
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return nil, errors.New("converting merged object: not a map")
	}
	// The typed value may share maps with its source; keep results independent.
	return &unstructured.Unstructured{Object: deepCopy(u.Object).(map[string]any)}, nil
}

func describe(o *unstructured.Unstructured) string {
	if o == nil {
		return "<nil>"
	}
	s := o.GetKind() + " " + o.GetName()
	if ns := o.GetNamespace(); ns != "" {
		s = o.GetKind() + " " + ns + "/" + o.GetName()
	}
	return s
}
