// Package argocdcm reads the settings Argo CD users keep in the argocd-cm
// ConfigMap that change how apps are compared, judged and tracked: resource
// customizations (Lua health checks and actions, ignoreDifferences,
// exclusions and inclusions, compare options) and the application keys
// (tracking method, instance label, reconciliation timeouts), and the
// kustomize and helm keys that change renders.
//
// Parse is pure: it turns the ConfigMap's data into Settings and one error
// per invalid entry, and an invalid entry never stops the others from
// applying. Source follows the live argocd-cm through an informer, so that a
// change applies without a restart, and tells its subscribers.
//
// Files: settings.go (Settings, Parse, Source), resource.go (the
// resource.* keys), application.go (the application.* and timeout.* keys),
// kustomize.go (kustomize.buildOptions), helm.go (helm.valuesFileSchemes).
package argocdcm

import (
	"context"
	"fmt"
	"slices"
	"sync"

	corev1 "k8s.io/api/core/v1"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"

	"github.com/skiffcd/skiff/internal/render"
)

// ConfigMapName is the ConfigMap Argo CD keeps its settings in.
const ConfigMapName = "argocd-cm"

// Settings are the parsed settings of one version of argocd-cm. A Settings
// is never changed once made: Source swaps in a new one on every change, so
// readers may keep the one they got for a whole comparison.
type Settings struct {
	Resource    ResourceSettings
	Application ApplicationSettings
	// Kustomize are the kustomize build flags of every app.
	Kustomize render.KustomizeOptions
	Helm      HelmSettings
}

// Parse reads data, argocd-cm's data, into Settings. Every invalid entry is
// one error naming its key; it is left out and the rest applies.
func Parse(data map[string]string) (*Settings, []error) {
	var s Settings
	var errs []error
	s.Resource, errs = parseResource(data, errs)
	s.Application, errs = parseApplication(data, errs)
	s.Kustomize, errs = parseKustomize(data, errs)
	s.Helm, errs = parseHelm(data, errs)
	return &s, errs
}

// Default is the Settings of an empty or missing argocd-cm.
func Default() *Settings {
	s, _ := Parse(nil)
	return s
}

// Source is the Settings of the live argocd-cm of one namespace, read from
// a cache of that namespace (the manager's config cache). It is a manager
// Runnable that runs on every replica; until argocd-cm has been read it
// holds Default.
type Source struct {
	informers cache.Informers

	mu      sync.RWMutex
	current *Settings
	errs    []error
	version string
	subs    []func(*Settings)
	// Invalid is told the errors of a new version of argocd-cm that has
	// invalid entries (the manager records them as an Event on it).
	Invalid func(cm *corev1.ConfigMap, errs []error)
}

// NewSource follows argocd-cm through informers of a cache of Skiff's
// namespace (which holds only that namespace's ConfigMaps).
func NewSource(informers cache.Informers) *Source {
	return &Source{informers: informers, current: Default()}
}

// Static is a Source that always holds s: for tests and for faces that run
// without a manager.
func Static(s *Settings) *Source {
	return &Source{current: s}
}

// Current returns the Settings in force.
func (s *Source) Current() *Settings {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.current
}

// Errors returns the invalid entries of the argocd-cm in force.
func (s *Source) Errors() []error {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return slices.Clone(s.errs)
}

// Subscribe registers fn, called with the new Settings after every change
// of argocd-cm that changes its data.
func (s *Source) Subscribe(fn func(*Settings)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.subs = append(s.subs, fn)
}

// Start follows argocd-cm until ctx ends.
func (s *Source) Start(ctx context.Context) error {
	inf, err := s.informers.GetInformer(ctx, &corev1.ConfigMap{})
	if err != nil {
		return fmt.Errorf("watching %s: %w", ConfigMapName, err)
	}
	_, err = inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { s.observe(obj) },
		UpdateFunc: func(_, obj any) { s.observe(obj) },
		DeleteFunc: func(obj any) {
			if cm, ok := configMap(obj); ok {
				s.apply(&corev1.ConfigMap{ObjectMeta: cm.ObjectMeta})
			}
		},
	})
	if err != nil {
		return fmt.Errorf("watching %s: %w", ConfigMapName, err)
	}
	<-ctx.Done()
	return nil
}

// NeedLeaderElection: every replica's controllers and API server read it.
func (s *Source) NeedLeaderElection() bool { return false }

func (s *Source) observe(obj any) {
	if cm, ok := configMap(obj); ok {
		s.apply(cm)
	}
}

// apply parses cm when its data changed and tells the subscribers.
func (s *Source) apply(cm *corev1.ConfigMap) {
	version := dataVersion(cm.Data)
	s.mu.RLock()
	same := s.version == version
	s.mu.RUnlock()
	if same {
		return
	}
	settings, errs := Parse(cm.Data)
	s.mu.Lock()
	s.current, s.errs, s.version = settings, errs, version
	subs := slices.Clone(s.subs)
	s.mu.Unlock()
	if len(errs) > 0 && s.Invalid != nil {
		s.Invalid(cm, errs)
	}
	for _, fn := range subs {
		fn(settings)
	}
}

// configMap returns obj as argocd-cm, or false for another ConfigMap.
func configMap(obj any) (*corev1.ConfigMap, bool) {
	if d, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
		obj = d.Obj
	}
	cm, ok := obj.(*corev1.ConfigMap)
	if !ok || cm.Name != ConfigMapName {
		return nil, false
	}
	return cm, true
}

// dataVersion identifies data's content, so that an update that leaves the
// data alone (a label, a resync) does not reparse nor wake subscribers.
func dataVersion(data map[string]string) string {
	keys := make([]string, 0, len(data))
	for k := range data {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var b []byte
	for _, k := range keys {
		b = fmt.Appendf(b, "%d:%s%d:%s", len(k), k, len(data[k]), data[k])
	}
	return string(b)
}
