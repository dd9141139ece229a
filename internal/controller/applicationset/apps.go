package applicationset

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"

	"github.com/skiffcd/skiff/api/v1alpha1"
	"github.com/skiffcd/skiff/internal/diff"
)

// annotationNotified is argocd-notifications' record of what it sent about
// an app; Argo CD's ApplicationSet controller keeps it, as it keeps the
// refresh annotation (defaultPreservedAnnotations).
const annotationNotified = "notified.notifications.argoproj.io"

var defaultPreservedAnnotations = []string{annotationNotified, v1alpha1.AnnotationRefresh}

// planned is one Application the set should have, as prepare completed it.
type planned struct {
	app v1alpha1.Application
	// prune is the template's automated prune, which a RollingSync's syncs
	// use once automated sync is taken off the app.
	prune bool
}

// prepare completes the generated Applications as Argo CD's controller
// does before comparing them with the cluster's: the set's namespace when
// none is named, the default project, HEAD for an empty targetRevision
// (argoutil.NormalizeApplicationSpec, so that the two controllers do not
// fight), the resources finalizer when the template names no finalizer,
// unless preserveResourcesOnDeletion (then none, so that deleting the app
// leaves its resources; the template's renderer adds it the same way), and under a
// RollingSync no automated sync: the set starts the syncs, step by step.
func prepare(set *v1alpha1.ApplicationSet, generated []v1alpha1.Application) []planned {
	preserve := set.Spec.SyncPolicy != nil && set.Spec.SyncPolicy.PreserveResourcesOnDeletion
	rolling := rollingSyncOn(set)
	out := make([]planned, 0, len(generated))
	for i := range generated {
		app := *generated[i].DeepCopy()
		app.Namespace = cmpOr(app.Namespace, set.Namespace)
		app.Spec.Project = cmpOr(app.Spec.Project, v1alpha1.DefaultProjectName)
		if app.Spec.Source != nil && app.Spec.Source.TargetRevision == "" {
			app.Spec.Source.TargetRevision = "HEAD"
		}
		app.Finalizers = withResourcesFinalizer(app.Finalizers, !preserve)
		p := planned{}
		if rolling && app.IsAutomated() {
			p.prune = app.Spec.SyncPolicy.Automated.Prune
			app.Spec.SyncPolicy.Automated = nil
		}
		if sp := app.Spec.SyncPolicy; sp != nil && isZeroJSON(sp) {
			app.Spec.SyncPolicy = nil
		}
		p.app = app
		out = append(out, p)
	}
	return out
}

func cmpOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// withResourcesFinalizer returns finalizers with the resources finalizer
// when want and the template names no finalizer (Argo CD's rule: a
// template's own finalizers are taken as they are), and without any
// resources finalizer when not want.
func withResourcesFinalizer(finalizers []string, want bool) []string {
	if !want {
		return slices.DeleteFunc(slices.Clone(finalizers), func(f string) bool {
			return f == v1alpha1.FinalizerResources || f == v1alpha1.FinalizerResourcesBackground
		})
	}
	if len(finalizers) == 0 {
		return []string{v1alpha1.FinalizerResources}
	}
	return finalizers
}

// isZeroJSON reports whether v serialises as an empty object.
func isZeroJSON(v any) bool {
	data, err := json.Marshal(v)
	return err == nil && string(data) == "{}"
}

// checkFunc checks one Application as the API server checks those it
// writes (appops.Validate): project, sources, destination.
type checkFunc func(ctx context.Context, app *v1alpha1.Application) error

// invalid lists why Skiff cannot create the planned Applications: names
// that repeat, namespaces other than the set's
// (Skiff serves Applications in its namespace only, as it serves the
// sets), and what check refuses. Empty when all are valid.
func invalid(ctx context.Context, set *v1alpha1.ApplicationSet, apps []planned, check checkFunc) []string {
	var msgs []string
	seen := map[string]bool{}
	for i := range apps {
		app := &apps[i].app
		if seen[app.Name] {
			msgs = append(msgs, fmt.Sprintf("ApplicationSet %s contains applications with duplicate name: %s", set.Name, app.Name))
			continue
		}
		seen[app.Name] = true
		if app.Namespace != set.Namespace {
			msgs = append(msgs, fmt.Sprintf("application %s: namespace %s is not the ApplicationSet's (%s), where Skiff serves Applications", app.Name, app.Namespace, set.Namespace))
			continue
		}
		if err := check(ctx, app); err != nil {
			msgs = append(msgs, fmt.Sprintf("application %s: %v", app.Name, err))
		}
	}
	return msgs
}

// summary is Argo CD's message for several errors: the first, and how
// many more there are.
func summary(msgs []string) string {
	if len(msgs) > 1 {
		return fmt.Sprintf("%s (and %d more)", msgs[0], len(msgs)-1)
	}
	return strings.Join(msgs, "")
}

// ownerRef is the controller reference of set's Applications.
func ownerRef(set *v1alpha1.ApplicationSet) metav1.OwnerReference {
	return metav1.OwnerReference{
		APIVersion: v1alpha1.GroupVersion.String(), Kind: kindApplicationSet, Name: set.Name, UID: set.UID,
		Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true),
	}
}

// setOwner makes set app's controller, replacing an older reference to it.
func setOwner(app *v1alpha1.Application, set *v1alpha1.ApplicationSet) {
	refs := slices.DeleteFunc(slices.Clone(app.OwnerReferences), func(r metav1.OwnerReference) bool {
		return r.Kind == kindApplicationSet && r.Name == set.Name
	})
	app.OwnerReferences = append(refs, ownerRef(set))
}

// controllerSet is the name of the ApplicationSet that controls app, or "".
func controllerSet(app *v1alpha1.Application) string {
	ref := metav1.GetControllerOf(app)
	if ref == nil || ref.Kind != kindApplicationSet || ref.APIVersion != v1alpha1.GroupVersion.String() {
		return ""
	}
	return ref.Name
}

// updated is found as set's controller leaves it when want is what the
// template gives (Argo CD's createOrUpdateInCluster): want's spec, labels,
// annotations and finalizers, except the annotations and labels the set
// preserves (its preservedFields, and Argo's notification and refresh
// annotations) and found's post-delete finalizers, which found keeps; the
// fields ignoreApplicationDifferences names keep found's values. Status
// and everything else stay as found has them.
func updated(found *v1alpha1.Application, want *v1alpha1.Application, set *v1alpha1.ApplicationSet) (*v1alpha1.Application, error) {
	out := found.DeepCopy()
	out.Spec = *want.Spec.DeepCopy()
	var annotations, labels []string
	if pf := set.Spec.PreservedFields; pf != nil {
		annotations, labels = pf.Annotations, pf.Labels
	}
	out.Annotations = keep(want.Annotations, found.Annotations, append(slices.Clone(annotations), defaultPreservedAnnotations...))
	out.Labels = keep(want.Labels, found.Labels, labels)
	out.Finalizers = slices.Clone(want.Finalizers)
	for _, f := range found.Finalizers {
		if strings.HasPrefix(f, v1alpha1.FinalizerPostDelete) && !slices.Contains(out.Finalizers, f) {
			out.Finalizers = append(out.Finalizers, f)
		}
	}
	setOwner(out, set)
	return ignoringDifferences(out, found, set.Spec.IgnoreApplicationDifferences)
}

// keep is want with the values of the keys named by preserved that found has.
func keep(want, found map[string]string, preserved []string) map[string]string {
	out := map[string]string{}
	for k, v := range want {
		out[k] = v
	}
	for _, k := range preserved {
		if v, ok := found[k]; ok {
			out[k] = v
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// ignoringDifferences gives out, for the fields the rules name (all apps'
// or the one named), found's values, as a sync with RespectIgnoreDifferences
// applies ignored fields (diff.RespectIgnores).
func ignoringDifferences(out, found *v1alpha1.Application, rules []v1alpha1.ApplicationSetResourceIgnoreDifferences) (*v1alpha1.Application, error) {
	var ignores []v1alpha1.ResourceIgnoreDifferences
	for _, r := range rules {
		if r.Name == "" || r.Name == out.Name {
			ignores = append(ignores, v1alpha1.ResourceIgnoreDifferences{Group: v1alpha1.GroupVersion.Group, Kind: "Application",
				JSONPointers: r.JSONPointers, JQPathExpressions: r.JQPathExpressions})
		}
	}
	if len(ignores) == 0 {
		return out, nil
	}
	want, err := toUnstructured(out)
	if err != nil {
		return nil, err
	}
	live, err := toUnstructured(found)
	if err != nil {
		return nil, err
	}
	kept, err := diff.RespectIgnores(want, live, ignores)
	if err != nil {
		return nil, fmt.Errorf("ignoreApplicationDifferences: %w", err)
	}
	data, err := json.Marshal(kept.Object)
	if err != nil {
		return nil, err
	}
	app := &v1alpha1.Application{}
	if err := json.Unmarshal(data, app); err != nil {
		return nil, fmt.Errorf("ignoreApplicationDifferences: %w", err)
	}
	app.TypeMeta = out.TypeMeta
	return app, nil
}

func toUnstructured(app *v1alpha1.Application) (*unstructured.Unstructured, error) {
	data, err := json.Marshal(app)
	if err != nil {
		return nil, err
	}
	u := &unstructured.Unstructured{}
	if err := json.Unmarshal(data, &u.Object); err != nil {
		return nil, err
	}
	u.SetAPIVersion(v1alpha1.GroupVersion.String())
	u.SetKind("Application")
	return u, nil
}
