package appops

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"sync"

	"github.com/pmezard/go-difflib/difflib"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/yaml"

	"github.com/skiffcd/skiff/api/v1alpha1"
	"github.com/skiffcd/skiff/internal/crdschema"
	"github.com/skiffcd/skiff/internal/diff"
	"github.com/skiffcd/skiff/internal/hook"
	"github.com/skiffcd/skiff/internal/knowntypes"
	"github.com/skiffcd/skiff/internal/mask"
	"github.com/skiffcd/skiff/internal/reposerver"
)

// Renderer renders Applications and reads their live objects: the
// desired state, the live state and their comparison that the API's
// manifests, diffs and resource tree and `skiff app diff|manifests --core`
// show.
type Renderer struct {
	Repo    *reposerver.Server
	Dynamic dynamic.Interface
	Mapper  meta.RESTMapper
	// KubeVersion is the destination's version, for Helm capabilities.
	KubeVersion string
	// Schemas gives custom resources' defaults to comparisons; nil means
	// the cluster's CRDs, read with Dynamic and Mapper.
	Schemas diff.Schemas
	// IgnoreDifferences, when set, returns the rules added to every app's
	// spec.ignoreDifferences (argocd-cm's), as the controller adds them.
	IgnoreDifferences func() []v1alpha1.ResourceIgnoreDifferences
	// KnownTypeFields, when set, returns argocd-cm's knownTypeFields, as
	// the controller compares with them.
	KnownTypeFields func() []knowntypes.Field

	schemasOnce sync.Once
}

func (r *Renderer) schemas() diff.Schemas {
	r.schemasOnce.Do(func() {
		if r.Schemas == nil && r.Dynamic != nil && r.Mapper != nil {
			r.Schemas = crdschema.New(r.Dynamic, r.Mapper)
		}
	})
	return r.Schemas
}

// Desired renders app at revision (empty means its target revision) and
// returns the objects, hooks included, with namespaces defaulted as the
// controller does (DefaultNamespaces), and the resolved revisions.
func (r *Renderer) Desired(ctx context.Context, app *v1alpha1.Application, revision string) ([]*unstructured.Unstructured, []string, error) {
	srcs := app.Spec.GetSources()
	if len(srcs) == 0 {
		return nil, nil, invalid("application %s has no source", app.Name)
	}
	var pins []string
	if revision != "" {
		if len(srcs) > 1 {
			return nil, nil, invalid("a revision can be given for a single-source application only")
		}
		pins = []string{revision}
	}
	resp, err := r.Repo.Manifests(ctx, reposerver.Request{
		AppName: app.Name, Project: app.ProjectName(), Sources: srcs, Revisions: pins, Namespace: app.Spec.Destination.Namespace, KubeVersion: r.KubeVersion,
	})
	if err != nil {
		return nil, nil, fmt.Errorf("rendering application %s: %w", app.Name, err)
	}
	// The repo server's manifests are the caller's own to change.
	return DefaultNamespaces(resp.Manifests, app.Spec.Destination.Namespace, r.isNamespaced), resp.Revisions, nil
}

// isNamespaced is the cluster's scope of obj's kind.
func (r *Renderer) isNamespaced(obj runtime.Object) (bool, error) {
	return apiutil.IsGVKNamespaced(obj.GetObjectKind().GroupVersionKind(), r.Mapper)
}

// Live reads the live object of a kind, namespace and name; nil when it
// does not exist or its kind is not served.
func (r *Renderer) Live(ctx context.Context, gvk schema.GroupVersionKind, namespace, name string) (*unstructured.Unstructured, error) {
	m, err := r.Mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if meta.IsNoMatchError(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("mapping %s: %w", gvk.Kind, err)
	}
	var res dynamic.ResourceInterface = r.Dynamic.Resource(m.Resource)
	if m.Scope.Name() == meta.RESTScopeNameNamespace {
		res = r.Dynamic.Resource(m.Resource).Namespace(namespace)
	}
	obj, err := res.Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading %s %s: %w", gvk.Kind, QualifiedName(namespace, name), err)
	}
	return obj, nil
}

// ResourceDiff is the difference of one resource.
type ResourceDiff struct {
	Group, Kind, Namespace, Name string
	// Diff is a unified diff from live to desired, Secret values masked.
	Diff string
}

// ResourceState is one resource of an app compared with its live object.
type ResourceState struct {
	Group, Version, Kind, Namespace, Name string
	// Hook marks a hook: it runs during syncs and is never Modified.
	Hook bool
	// Modified says a sync would change (or, without Target, prune) it.
	Modified bool
	// Target is the predicted live object after a sync, nil when git no
	// longer has the resource; Live is nil when it does not exist. Both are
	// normalized with Secret values masked.
	Target, Live *unstructured.Unstructured
	// Diff is a unified diff from live to desired, Secret values masked.
	Diff string
}

// Diff compares app's desired state with the live objects and returns the
// resources that differ: modified, missing, and live objects git no longer
// has (as listed in the app's status).
func (r *Renderer) Diff(ctx context.Context, app *v1alpha1.Application, revision string) ([]ResourceDiff, error) {
	states, err := r.Compare(ctx, app, revision)
	if err != nil {
		return nil, err
	}
	var out []ResourceDiff
	for _, st := range states {
		if st.Modified {
			out = append(out, ResourceDiff{Group: st.Group, Kind: st.Kind, Namespace: st.Namespace, Name: st.Name, Diff: st.Diff})
		}
	}
	return out, nil
}

// Compare compares every resource of app's desired state, hooks included,
// with its live object, and adds the live objects git no longer has (as
// listed in the app's status), sorted by group, kind, namespace and name.
func (r *Renderer) Compare(ctx context.Context, app *v1alpha1.Application, revision string) ([]ResourceState, error) {
	desired, _, err := r.Desired(ctx, app, revision)
	if err != nil {
		return nil, err
	}
	var out []ResourceState
	seen := map[string]bool{}
	ignore := app.Spec.IgnoreDifferences
	if r.IgnoreDifferences != nil {
		ignore = append(slices.Clip(ignore), r.IgnoreDifferences()...)
	}
	var known []knowntypes.Field
	if r.KnownTypeFields != nil {
		known = r.KnownTypeFields()
	}
	for _, d := range desired {
		gvk := d.GroupVersionKind()
		live, err := r.Live(ctx, gvk, d.GetNamespace(), d.GetName())
		if err != nil {
			return nil, err
		}
		res, err := diff.Compare(d, live, diff.Options{IgnoreDifferences: ignore, Schemas: r.schemas(), KnownTypeFields: known})
		if err != nil {
			return nil, fmt.Errorf("comparing %s %s: %w", gvk.Kind, QualifiedName(d.GetNamespace(), d.GetName()), err)
		}
		st := ResourceState{Group: gvk.Group, Version: gvk.Version, Kind: gvk.Kind, Namespace: d.GetNamespace(), Name: d.GetName(),
			Modified: res.Modified, Target: res.Desired, Live: res.Live, Diff: res.Diff}
		if live != nil && st.Live == nil {
			st.Live = mask.Secret(live)
		}
		if hook.IsHook(d) {
			// Hooks run during syncs; they are not part of the state.
			st.Hook, st.Modified, st.Diff = true, false, ""
		} else {
			seen[gvk.Group+"/"+gvk.Kind+"/"+d.GetNamespace()+"/"+d.GetName()] = true
		}
		out = append(out, st)
	}
	for _, rs := range app.Status.Resources {
		if !rs.RequiresPruning || seen[rs.Group+"/"+rs.Kind+"/"+rs.Namespace+"/"+rs.Name] {
			continue
		}
		gvk := schema.GroupVersionKind{Group: rs.Group, Version: rs.Version, Kind: rs.Kind}
		live, err := r.Live(ctx, gvk, rs.Namespace, rs.Name)
		if err != nil {
			return nil, err
		}
		if live == nil || diff.IgnoreExtraneous(live) {
			continue
		}
		res, text, err := removal(live)
		if err != nil {
			return nil, err
		}
		out = append(out, ResourceState{Group: rs.Group, Version: rs.Version, Kind: rs.Kind, Namespace: rs.Namespace, Name: rs.Name,
			Modified: true, Live: res.Live, Diff: text})
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		return a.Group+"/"+a.Kind+"/"+a.Namespace+"/"+a.Name < b.Group+"/"+b.Kind+"/"+b.Namespace+"/"+b.Name
	})
	return out, nil
}

// removal renders the diff of a live object that would be pruned.
func removal(live *unstructured.Unstructured) (diff.Result, string, error) {
	res, err := diff.Compare(nil, live, diff.Options{})
	if err != nil {
		return diff.Result{}, "", err
	}
	data, err := yaml.Marshal(res.Live.Object)
	if err != nil {
		return diff.Result{}, "", fmt.Errorf("printing %s %s: %w", live.GetKind(), live.GetName(), err)
	}
	text, err := difflib.GetUnifiedDiffString(difflib.UnifiedDiff{
		A: difflib.SplitLines(string(data)), FromFile: "live", ToFile: "desired", Context: 3,
	})
	if err != nil {
		return diff.Result{}, "", fmt.Errorf("rendering diff: %w", err)
	}
	return res, text, nil
}

// ManagedResource is one resource of an app as GET
// /api/v1/applications/{name}/managed-resources lists it and the CLI
// reads it (Argo CD's field names); the states are JSON, Secret values
// masked.
type ManagedResource struct {
	Group       string `json:"group"`
	Kind        string `json:"kind"`
	Namespace   string `json:"namespace"`
	Name        string `json:"name"`
	Hook        bool   `json:"hook"`
	Modified    bool   `json:"modified"`
	TargetState string `json:"targetState"`
	LiveState   string `json:"liveState"`
	Diff        string `json:"diff"`
}

// ManagedResources lists states as ManagedResources.
func ManagedResources(states []ResourceState) ([]ManagedResource, error) {
	items := make([]ManagedResource, 0, len(states))
	for _, st := range states {
		d := ManagedResource{Group: st.Group, Kind: st.Kind, Namespace: st.Namespace, Name: st.Name,
			Hook: st.Hook, Modified: st.Modified, Diff: st.Diff}
		var err error
		if d.TargetState, err = MaskedJSON(st.Target); err == nil {
			d.LiveState, err = MaskedJSON(st.Live)
		}
		if err != nil {
			return nil, err
		}
		items = append(items, d)
	}
	return items, nil
}

// MaskedJSON is obj as a JSON string with Secret values masked; "" for nil.
func MaskedJSON(obj *unstructured.Unstructured) (string, error) {
	if obj == nil {
		return "", nil
	}
	data, err := json.Marshal(mask.Secret(obj).Object)
	if err != nil {
		return "", fmt.Errorf("encoding %s %s: %w", obj.GetKind(), obj.GetName(), err)
	}
	return string(data), nil
}

// QualifiedName is namespace/name, or name alone for a cluster-scoped
// object.
func QualifiedName(namespace, name string) string {
	if namespace == "" {
		return name
	}
	return namespace + "/" + name
}

// LiveClients builds a Renderer's Dynamic and Mapper for the cluster
// behind cfg; the mapper discovers kinds as they are asked for.
func LiveClients(cfg *rest.Config) (dynamic.Interface, meta.RESTMapper, error) {
	httpClient, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, nil, err
	}
	dyn, err := dynamic.NewForConfigAndClient(cfg, httpClient)
	if err != nil {
		return nil, nil, err
	}
	mapper, err := apiutil.NewDynamicRESTMapper(cfg, httpClient)
	if err != nil {
		return nil, nil, err
	}
	return dyn, mapper, nil
}
