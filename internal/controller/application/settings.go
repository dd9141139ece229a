package application

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/skiffcd/skiff/api/v1alpha1"
	"github.com/skiffcd/skiff/internal/argocdcm"
	"github.com/skiffcd/skiff/internal/clustercache"
	"github.com/skiffcd/skiff/internal/diff"
)

// followSettings re-judges (and, when the tracking method or instance
// label changed, re-tracks: retrack; when resource.respectRBAC changed,
// rechecks the kinds refused: RecheckRBAC), on every change of argocd-cm, the cached
// objects of the kinds whose health script changed, in the local cache and
// every registered cluster's: the apps of those whose health moved are
// compared again (liveChange), without waiting for the objects to change.
// Comparisons judge with the settings in force at the time anyway.
func (r *Reconciler) followSettings() {
	if r.Settings == nil {
		return
	}
	r.Cache.SetTracking(context.Background(), r.tracking()) // not started yet: no reads
	prev := r.Settings.Current()
	r.Settings.Subscribe(func(next *argocdcm.Settings) {
		stale := argocdcm.HealthScriptChanged(prev.Resource, next.Resource)
		filters := argocdcm.FiltersChanged(prev.Resource, next.Resource)
		rbac := prev.Resource.RespectRBAC != next.Resource.RespectRBAC
		retrack := trackingOf(prev) != trackingOf(next)
		prev = next
		for _, c := range r.caches() {
			if filters {
				c.Reexclude()
			}
			if rbac {
				c.RecheckRBAC()
			}
			c.Rejudge(stale)
		}
		if retrack {
			r.retrack()
		}
	})
}

// UpdateFingerprint digests a tracked object, for a watch cache's
// Options.Fingerprint, without the fields argocd-cm in force says its
// updates may change without a comparison of its app
// (ignoreResourceUpdates): "" when resource.ignoreResourceUpdatesEnabled
// is false, or a rule fails, so that every update is told. A nil Source
// stands for argocd-cm's defaults.
func UpdateFingerprint(settings *argocdcm.Source) func(*unstructured.Unstructured) string {
	return func(obj *unstructured.Unstructured) string {
		current := defaultSettings
		if settings != nil {
			current = settings.Current()
		}
		if !current.Resource.IgnoreResourceUpdatesEnabled {
			return ""
		}
		fp, err := diff.UpdateFingerprint(obj, current.Resource.UpdateRules(obj.GroupVersionKind().GroupKind()))
		if err != nil {
			return ""
		}
		return fp
	}
}

// defaultSettings stand for argocd-cm when the controller follows none;
// one value, so that comparisons' inputs compare equal.
var defaultSettings = argocdcm.Default()

// settings returns the argocd-cm settings in force.
func (r *Reconciler) settings() *argocdcm.Settings {
	if r.Settings == nil {
		return defaultSettings
	}
	return r.Settings.Current()
}

// ignoreDifferences returns app's ignoreDifferences and argocd-cm's,
// which apply to every app.
func ignoreDifferences(app *v1alpha1.Application, settings *argocdcm.Settings) []v1alpha1.ResourceIgnoreDifferences {
	return append(slices.Clip(app.Spec.IgnoreDifferences), settings.Resource.IgnoreRules()...)
}

// withoutExcluded leaves out the desired objects of the kinds argocd-cm
// excludes on server, as Argo CD does, and of the kinds the cluster's
// cache skips because its credentials may not list them
// (resource.respectRBAC: skipped, nil for none), which it could neither
// compare nor prune; it names them for the app's ExcludedResourceWarning
// ("" when none).
func withoutExcluded(desired []*unstructured.Unstructured, settings *argocdcm.Settings, server string, skipped func(schema.GroupKind) bool) ([]*unstructured.Unstructured, string) {
	kept := desired[:0:0]
	var excluded []string
	for _, d := range desired {
		gvk := d.GroupVersionKind()
		switch {
		case settings.Resource.Excluded(gvk.Group, gvk.Kind, server):
			excluded = append(excluded, fmt.Sprintf("Resource %s/%s %s is excluded in the settings", gvk.Group, gvk.Kind, d.GetName()))
		case skipped != nil && skipped(gvk.GroupKind()):
			excluded = append(excluded, fmt.Sprintf("Resource %s/%s %s is not watched: the cluster's credentials may not list it (resource.respectRBAC)", gvk.Group, gvk.Kind, d.GetName()))
		default:
			kept = append(kept, d)
		}
	}
	return kept, strings.Join(excluded, "; ")
}

// caches returns the local watch cache and those of the registered
// clusters in use.
func (r *Reconciler) caches() []*clustercache.Cache {
	out := []*clustercache.Cache{r.Cache}
	r.remotes.mu.Lock()
	defer r.remotes.mu.Unlock()
	for _, m := range r.remotes.byServer {
		if m.cache != nil {
			out = append(out, m.cache)
		}
	}
	return out
}
