package application

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/skiffcd/skiff/api/v1alpha1"
	"github.com/skiffcd/skiff/internal/appops"
	"github.com/skiffcd/skiff/internal/clustercache"
	"github.com/skiffcd/skiff/internal/diff"
	"github.com/skiffcd/skiff/internal/health"
	"github.com/skiffcd/skiff/internal/hook"
	"github.com/skiffcd/skiff/internal/ownwrites"
	"github.com/skiffcd/skiff/internal/reposerver"
	"github.com/skiffcd/skiff/internal/syncengine"
)

// comparison is the outcome of comparing an Application with the cluster.
type comparison struct {
	// desired objects with namespaces defaulted; nil when rendering failed.
	desired   []*unstructured.Unstructured
	revisions []string
	// failed says the state could not be determined (bad spec, render error):
	// nothing may be synced or pruned from it.
	failed bool
	// inputs is what the outcome was found on; nil when failed.
	inputs *comparisonInputs
}

// compare renders the app, compares it with the live objects and writes
// sync, health, resources, summary and conditions into app.Status. written
// holds objects a sync has just written, as the API server returned them:
// they are the live state even before the cluster cache shows them.
func (r *Reconciler) compare(ctx context.Context, app *v1alpha1.Application, hard bool, maxRevisionAge time.Duration, written map[clustercache.ResourceKey]*unstructured.Unstructured) comparison {
	now := metav1.NewTime(r.now())
	app.Status.ReconciledAt = &now
	app.Status.ObservedAt = &now
	app.Status.ControllerNamespace = r.Namespace
	app.Status.Sync.ComparedTo = v1alpha1.ComparedTo{
		Destination: app.Spec.Destination, IgnoreDifferences: app.Spec.IgnoreDifferences,
	}
	if app.Spec.Source != nil {
		app.Status.Sync.ComparedTo.Source = *app.Spec.Source
	}
	app.Status.Sync.ComparedTo.Sources = app.Spec.Sources

	conds := newConditions(app.Status.Conditions, now)
	conds.set(v1alpha1.ApplicationConditionUnsupportedField, unsupportedFields(app))

	proj, cluster, msg := r.validate(ctx, app)
	if msg != "" {
		conds.set(v1alpha1.ApplicationConditionInvalidSpecError, msg)
		conds.clear(v1alpha1.ApplicationConditionComparisonError)
		app.Status.Conditions = conds.list()
		app.Status.Sync.Status = v1alpha1.SyncStatusCodeUnknown
		return comparison{failed: true}
	}
	conds.clear(v1alpha1.ApplicationConditionInvalidSpecError)
	tgt, err := r.useCluster(app.Name, cluster)
	if err != nil {
		// Nothing is known of the live state: no sync nor prune may
		// follow, and the app's health is unknown until the cluster answers.
		conds.set(v1alpha1.ApplicationConditionComparisonError, err.Error())
		app.Status.Conditions = conds.list()
		app.Status.Sync.Status = v1alpha1.SyncStatusCodeUnknown
		if app.Status.Health.Status != v1alpha1.HealthStatusUnknown {
			app.Status.Health = v1alpha1.HealthStatus{Status: v1alpha1.HealthStatusUnknown, Message: err.Error(), LastTransitionTime: &now}
		}
		return comparison{failed: true}
	}

	resp, err := r.Repo.Manifests(ctx, r.manifestRequest(app, tgt.caps, hard, maxRevisionAge))
	if err != nil {
		// Keep the last known resources and health: the live state did not
		// change because git became unreadable.
		conds.set(v1alpha1.ApplicationConditionComparisonError, fmt.Sprintf("Failed to load target state: %v", err))
		app.Status.Conditions = conds.list()
		app.Status.Sync.Status = v1alpha1.SyncStatusCodeUnknown
		return comparison{failed: true}
	}
	conds.clear(v1alpha1.ApplicationConditionComparisonError)
	app.Status.Sync.Revisions = nil
	app.Status.Sync.Revision = ""
	if len(app.Spec.Sources) > 0 {
		app.Status.Sync.Revisions = resp.Revisions
	} else {
		app.Status.Sync.Revision = resp.Revisions[0]
	}
	app.Status.SourceTypes, app.Status.SourceType = sourceTypes(app)

	desired := appops.DefaultNamespaces(resp.Manifests, app.Spec.Destination.Namespace, tgt.isNamespaced)
	desired, excluded := withoutExcluded(desired, r.settings(), cluster.Server, tgt.cache.SkippedKind)
	conds.set(v1alpha1.ApplicationConditionExcludedResourceWarning, excluded)
	// PostDelete hooks hold the app, once deleted, until they have run.
	app.Finalizers = postDeleteFinalizers(app.Finalizers, slices.ContainsFunc(desired, hook.IsPostDelete))
	if violations := projectViolations(proj, app, desired, cluster, r.ManagedNamespace); violations != "" {
		conds.set(v1alpha1.ApplicationConditionInvalidSpecError, violations)
	}

	keys := make([]clustercache.ResourceKey, len(desired))
	for i, d := range desired {
		keys[i] = clustercache.KeyOf(d)
	}
	// Before the live objects are read: a change in between shows as a new
	// version next time rather than going unseen.
	versions := tgt.cache.Versions(app.Name, keys)
	settings := r.settings()
	live := withWritten(tgt.cache.AppObjects(app.Name), written)
	resources, syncStatus := r.resourceStatuses(ctx, tgt.cache, app, desired, keys, live, written)
	app.Status.Resources = resources
	app.Status.Sync.Status = syncStatus
	_, childHealthChecked := settings.Resource.HealthScript(health.ApplicationKind)
	app.Status.Health = appHealth(app.Status.Health, resources, childHealthChecked, now)
	app.Status.Summary.Images = images(desired, live)
	app.Status.Conditions = conds.list()
	return comparison{desired: desired, revisions: resp.Revisions, inputs: &comparisonInputs{
		project: proj.ResourceVersion, render: resp.Key, objects: keys, live: versions, settings: settings,
	}}
}

// manifestRequest asks for the rendered target state of app's sources in
// a cluster of capabilities caps.
func (r *Reconciler) manifestRequest(app *v1alpha1.Application, caps capabilities, hard bool, maxRevisionAge time.Duration) reposerver.Request {
	return reposerver.Request{
		AppName: app.Name, Project: app.ProjectName(), Sources: app.Spec.GetSources(), Namespace: app.Spec.Destination.Namespace,
		KubeVersion: caps.kubeVersion, APIVersions: caps.apiVersions, Hard: hard, MaxRevisionAge: maxRevisionAge,
	}
}

// withWritten returns the live objects with those a sync has just written
// in place of (or in addition to) older cached ones.
func withWritten(live []*unstructured.Unstructured, written map[clustercache.ResourceKey]*unstructured.Unstructured) []*unstructured.Unstructured {
	if len(written) == 0 {
		return live
	}
	out := make([]*unstructured.Unstructured, 0, len(live)+len(written))
	seen := map[clustercache.ResourceKey]bool{}
	for _, l := range live {
		key := clustercache.KeyOf(l)
		seen[key] = true
		out = append(out, newer(l, written[key]))
	}
	for key, w := range written {
		if !seen[key] {
			out = append(out, w)
		}
	}
	return out
}

// newer returns the later of a cached object and the same object as a sync
// wrote it: by the end of a sync the cache may already hold a later version
// (a Deployment's status), or not yet the written one.
func newer(cached, written *unstructured.Unstructured) *unstructured.Unstructured {
	switch {
	case written == nil:
		return cached
	case cached == nil:
		return written
	case ownwrites.AtLeast(cached.GetResourceVersion(), written.GetResourceVersion()):
		return cached
	}
	return written
}

// resourceStatuses compares each desired object (keys[i] is desired[i]'s)
// with its live one (just written, or cached; read whole from the API
// server when no app tracks it yet), and lists live objects git no longer
// has as requiring pruning.
func (r *Reconciler) resourceStatuses(ctx context.Context, cache *clustercache.Cache, app *v1alpha1.Application, desired []*unstructured.Unstructured, keys []clustercache.ResourceKey, live []*unstructured.Unstructured, written map[clustercache.ResourceKey]*unstructured.Unstructured) ([]v1alpha1.ResourceStatus, v1alpha1.SyncStatusCode) {
	sync := v1alpha1.SyncStatusCodeSynced
	base, _ := syncengine.ParseOptions(policyOptions(app)) // an unreadable option is the sync's error to report
	var out []v1alpha1.ResourceStatus
	seen := map[clustercache.ResourceKey]bool{}
	settings := r.settings()
	judge := settings.Resource.Judge()
	ignore := ignoreDifferences(app, settings)
	for i, d := range desired {
		key := keys[i]
		seen[key] = true
		if hook.IsHook(d) {
			continue // hooks run during syncs; they are not part of the state
		}
		cached, _, err := cache.GetFull(ctx, key)
		liveObj := newer(cached, written[key])
		rs := resourceStatus(d)
		modified := false
		if err == nil {
			modified, err = r.diffs.Modified(app.Name, key.String(), d, liveObj, diff.Options{IgnoreDifferences: ignore, Schemas: r.Schemas,
				KnownTypeFields: settings.Resource.KnownTypeFields()})
		}
		switch {
		case err != nil:
			rs.Status = v1alpha1.SyncStatusCodeUnknown
			sync = v1alpha1.SyncStatusCodeOutOfSync
		case modified:
			rs.Status = v1alpha1.SyncStatusCodeOutOfSync
			sync = v1alpha1.SyncStatusCodeOutOfSync
		default:
			rs.Status = v1alpha1.SyncStatusCodeSynced
		}
		rs.Health = resourceHealth(judge, liveObj)
		rs.RequiresDeletionConfirmation = requiresConfirmation(base, d, false)
		out = append(out, rs)
	}
	for _, l := range live {
		key := clustercache.KeyOf(l)
		if seen[key] || hook.IsHook(l) || len(l.GetOwnerReferences()) > 0 {
			continue
		}
		rs := resourceStatus(l)
		rs.RequiresPruning = true
		rs.Status = v1alpha1.SyncStatusCodeOutOfSync
		if diff.IgnoreExtraneous(l) {
			rs.Status = v1alpha1.SyncStatusCodeSynced
		} else {
			sync = v1alpha1.SyncStatusCodeOutOfSync
		}
		rs.Health = resourceHealth(judge, l)
		rs.RequiresDeletionConfirmation = requiresConfirmation(base, l, true)
		out = append(out, rs)
	}
	sort.SliceStable(out, func(i, j int) bool { return resourceLess(out[i], out[j]) })
	return out, sync
}

// resourceHealth is the health of a resource's entry in the app's status:
// none when the live object says ignore-healthcheck, as Argo CD, so that
// it counts nowhere.
func resourceHealth(judge health.Judge, live *unstructured.Unstructured) *v1alpha1.HealthStatus {
	if health.Ignored(live) {
		return nil
	}
	hs := judge.Assess(live)
	return &v1alpha1.HealthStatus{Status: hs.Status, Message: hs.Message}
}

// requiresConfirmation reports whether deleting obj waits for the app's
// deletion approval: Delete=confirm, or Prune=confirm when it is to be
// pruned, in its sync options over the app's (base).
func requiresConfirmation(base syncengine.Options, obj *unstructured.Unstructured, prune bool) bool {
	opts, err := base.Merge(obj.GetAnnotations()[syncengine.AnnotationSyncOptions])
	return err == nil && (opts.DeleteConfirm || prune && opts.PruneConfirm)
}

func resourceStatus(obj *unstructured.Unstructured) v1alpha1.ResourceStatus {
	gvk := obj.GroupVersionKind()
	wave := int64(0)
	fmt.Sscan(obj.GetAnnotations()[syncengine.AnnotationSyncWave], &wave)
	return v1alpha1.ResourceStatus{
		Group: gvk.Group, Version: gvk.Version, Kind: gvk.Kind,
		Namespace: obj.GetNamespace(), Name: obj.GetName(), SyncWave: wave,
	}
}

func resourceLess(a, b v1alpha1.ResourceStatus) bool {
	ka := a.Group + "/" + a.Kind + "/" + a.Namespace + "/" + a.Name
	kb := b.Group + "/" + b.Kind + "/" + b.Namespace + "/" + b.Name
	return ka < kb
}

// appHealth is the worst health of the app's resources, leaving out child
// Applications as Argo CD does; the transition time moves only when the
// status changes.
func appHealth(prev v1alpha1.HealthStatus, resources []v1alpha1.ResourceStatus, childHealthChecked bool, now metav1.Time) v1alpha1.HealthStatus {
	results := make([]health.Result, 0, len(resources))
	for _, rs := range resources {
		if rs.Health == nil || rs.RequiresPruning || !health.RollsUp(rs.Group, rs.Kind, rs.Health.Status, childHealthChecked) {
			continue
		}
		results = append(results, health.Result{Status: rs.Health.Status, Message: rs.Health.Message})
	}
	worst := health.Worst(results...)
	out := v1alpha1.HealthStatus{Status: worst.Status, LastTransitionTime: prev.LastTransitionTime}
	if worst.Status != v1alpha1.HealthStatusHealthy {
		out.Message = worst.Message
	}
	if prev.Status != worst.Status || out.LastTransitionTime == nil {
		out.LastTransitionTime = &now
	}
	return out
}

// images lists the container images of the desired and live workloads.
func images(desired, live []*unstructured.Unstructured) []string {
	set := map[string]bool{}
	collect := func(obj *unstructured.Unstructured) {
		for _, path := range containerLists {
			list, _, _ := unstructured.NestedFieldNoCopy(obj.Object, path...)
			containers, _ := list.([]any)
			for _, c := range containers {
				if m, ok := c.(map[string]any); ok {
					if img, ok := m["image"].(string); ok && img != "" {
						set[img] = true
					}
				}
			}
		}
	}
	for _, o := range desired {
		collect(o)
	}
	for _, o := range live {
		collect(o)
	}
	out := make([]string, 0, len(set))
	for img := range set {
		out = append(out, img)
	}
	sort.Strings(out)
	return out
}

// containerLists are where images are found: the pod template of workloads
// and of CronJobs' jobs, and a Pod's own spec. They are read in place, for
// every object of every comparison, so nothing is copied.
var containerLists = [][]string{
	{"spec", "template", "spec", "containers"}, {"spec", "template", "spec", "initContainers"},
	{"spec", "jobTemplate", "spec", "template", "spec", "containers"}, {"spec", "jobTemplate", "spec", "template", "spec", "initContainers"},
	{"spec", "containers"}, {"spec", "initContainers"},
}

func sourceTypes(app *v1alpha1.Application) ([]v1alpha1.ApplicationSourceType, v1alpha1.ApplicationSourceType) {
	var types []v1alpha1.ApplicationSourceType
	for _, src := range app.Spec.GetSources() {
		switch {
		case src.Chart != "" || src.Helm != nil:
			types = append(types, v1alpha1.ApplicationSourceTypeHelm)
		case src.Kustomize != nil:
			types = append(types, v1alpha1.ApplicationSourceTypeKustomize)
		case src.Plugin != nil:
			types = append(types, v1alpha1.ApplicationSourceTypePlugin)
		default:
			types = append(types, v1alpha1.ApplicationSourceTypeDirectory)
		}
	}
	if len(app.Spec.Sources) > 0 {
		return types, ""
	}
	if len(types) == 0 {
		return nil, ""
	}
	return nil, types[0]
}

// unsupportedFields names the fields an Application may set that Skiff keeps
// but does not act on, so users see them instead of silently losing them.
func unsupportedFields(app *v1alpha1.Application) string {
	var fields []string
	if app.Spec.SourceHydrator != nil {
		fields = append(fields, "spec.sourceHydrator")
	}
	if p := app.Spec.SyncPolicy; p != nil && p.ManagedNamespaceMetadata != nil {
		fields = append(fields, "spec.syncPolicy.managedNamespaceMetadata")
	}
	if p := app.Spec.SyncPolicy; p != nil {
		// An unknown option fails the sync itself, with its own message.
		if opts, err := syncengine.ParseOptions(p.SyncOptions); err == nil && len(opts.Unsupported) > 0 {
			fields = append(fields, "spec.syncPolicy.syncOptions "+strings.Join(opts.Unsupported, ", "))
		}
	}
	for i, src := range app.Spec.GetSources() {
		if src.Plugin != nil {
			fields = append(fields, fmt.Sprintf("source %d: plugin", i+1))
		}
		if src.Kustomize != nil && (src.Kustomize.Version != "" || src.Kustomize.KubeVersion != "") {
			fields = append(fields, fmt.Sprintf("source %d: kustomize.version/kubeVersion", i+1))
		}
	}
	if len(fields) == 0 {
		return ""
	}
	return "accepted but not implemented: " + strings.Join(fields, ", ")
}
