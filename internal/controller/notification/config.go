package notification

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/skiffcd/skiff/internal/notify"
	"github.com/skiffcd/skiff/internal/notify/service"
)

// configStore reads a notification ConfigMap and Secret from a cache of
// their own and keeps their parse until either changes. The cache's events
// count the changes, so that the notifications sent between two changes
// read neither object: each cache read costs a REST mapping, and a
// Rollout update sends an event per step.
type configStore struct {
	cache                         cache.Cache
	namespace, cmName, secretName string
	parse                         func(map[string]string, map[string][]byte) (*notify.Config, []error)
	// changes counts the events of either object.
	changes atomic.Uint64

	// mu is held across a parse, so one version is parsed (and its errors
	// reported) once.
	mu sync.Mutex
	// loaded is the parse as of changes == at (nil: no ConfigMap); read
	// says there is one.
	loaded *loadedConfig
	at     uint64
	read   bool
}

// newConfigStore caches only the notification ConfigMap and Secret of
// namespace, and adds the cache to the manager.
func newConfigStore(mgr ctrl.Manager, namespace, cmName, secretName string,
	parse func(map[string]string, map[string][]byte) (*notify.Config, []error)) (*configStore, error) {
	byName := func(name string) cache.ByObject {
		return cache.ByObject{Field: fields.OneTermEqualSelector("metadata.name", name)}
	}
	c, err := cache.New(mgr.GetConfig(), cache.Options{
		Scheme:            mgr.GetScheme(),
		Mapper:            mgr.GetRESTMapper(),
		DefaultNamespaces: map[string]cache.Config{namespace: {}},
		ByObject: map[client.Object]cache.ByObject{
			&corev1.ConfigMap{}: byName(cmName),
			&corev1.Secret{}:    byName(secretName),
		},
	})
	if err != nil {
		return nil, fmt.Errorf("creating the cache of %s: %w", cmName, err)
	}
	s := &configStore{cache: c, namespace: namespace, cmName: cmName, secretName: secretName, parse: parse}
	changed := func(any) { s.changes.Add(1) }
	counter := toolscache.ResourceEventHandlerFuncs{AddFunc: changed, DeleteFunc: changed, UpdateFunc: func(_, o any) { changed(o) }}
	for _, obj := range []client.Object{&corev1.ConfigMap{}, &corev1.Secret{}} {
		// Not started yet: this returns at once.
		informer, err := c.GetInformer(context.Background(), obj)
		if err != nil {
			return nil, fmt.Errorf("watching %s: %w", cmName, err)
		}
		if _, err := informer.AddEventHandler(counter); err != nil {
			return nil, fmt.Errorf("watching %s: %w", cmName, err)
		}
	}
	if err := mgr.Add(c); err != nil {
		return nil, err
	}
	return s, nil
}

// get returns the configuration, parsing it again when either object
// changed; nil when the ConfigMap does not exist. Errors of a new version
// are reported once, as Events on the ConfigMap.
func (s *configStore) get(ctx context.Context, recorder events.EventRecorder) (*loadedConfig, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	// Read before the objects: a change in between counts again.
	changes := s.changes.Load()
	if s.read && s.at == changes {
		return s.loaded, nil
	}
	loaded, err := s.load(ctx, recorder)
	if err != nil {
		return nil, err
	}
	s.loaded, s.at, s.read = loaded, changes, true
	return loaded, nil
}

// load reads both objects and returns s.loaded when neither changed, else
// their new parse, with the senders built.
func (s *configStore) load(ctx context.Context, recorder events.EventRecorder) (*loadedConfig, error) {
	var cm corev1.ConfigMap
	err := s.cache.Get(ctx, types.NamespacedName{Namespace: s.namespace, Name: s.cmName}, &cm)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", s.cmName, err)
	}
	var secret corev1.Secret
	err = s.cache.Get(ctx, types.NamespacedName{Namespace: s.namespace, Name: s.secretName}, &secret)
	if err != nil && !apierrors.IsNotFound(err) {
		return nil, fmt.Errorf("reading %s: %w", s.secretName, err)
	}
	version := cm.ResourceVersion + "/" + secret.ResourceVersion
	if s.loaded != nil && s.loaded.version == version {
		return s.loaded, nil
	}
	cfg, errs := s.parse(cm.Data, secret.Data)
	loaded := &loadedConfig{version: version, cfg: cfg, senders: map[string]service.Sender{}, broken: map[string]error{}, reported: map[string]bool{}}
	for _, name := range sortedKeys(cfg.Services) {
		sender, err := service.New(cfg.Services[name])
		if err != nil {
			loaded.broken[name] = err
			errs = append(errs, err)
			continue
		}
		loaded.senders[name] = sender
	}
	for _, err := range errs {
		configErrors.Inc()
		recorder.Eventf(&cm, nil, corev1.EventTypeWarning, eventReasonConfigError, "Load", "%s", cfg.Mask(err.Error()))
	}
	return loaded, nil
}
