package application

import (
	"slices"

	"github.com/skiffcd/skiff/api/v1alpha1"
	"github.com/skiffcd/skiff/internal/argocdcm"
	"github.com/skiffcd/skiff/internal/clustercache"
)

// followSettings re-judges, on every change of argocd-cm, the cached
// objects of the kinds whose health script changed, in the local cache and
// every registered cluster's: the apps of those whose health moved are
// compared again (liveChange), without waiting for the objects to change.
// Comparisons judge with the settings in force at the time anyway.
func (r *Reconciler) followSettings() {
	if r.Settings == nil {
		return
	}
	prev := r.Settings.Current()
	r.Settings.Subscribe(func(next *argocdcm.Settings) {
		stale := argocdcm.HealthScriptChanged(prev.Resource, next.Resource)
		prev = next
		for _, c := range r.caches() {
			c.Rejudge(stale)
		}
	})
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
