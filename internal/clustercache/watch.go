package clustercache

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
)

// kindWatch is how one kind is watched. A kind is first watched as
// metadata only: most kinds' objects (Pods, ReplicaSets, the namespaces'
// own ServiceAccounts) are tracked by no Application, and the API server
// sends their metadata in protobuf, which costs a fraction of decoding
// their JSON. Once an object of the kind turns out to be tracked, the kind
// is watched whole from then on (see upgrade).
type kindWatch struct {
	gvk schema.GroupVersionKind
	// namespaces are watched one by one ("" for all; see namespacesOf).
	namespaces []string
	// wantFull is set when a tracked object of the kind was seen, full
	// once the full watch has its list in.
	wantFull, full bool
	// stopMetadata ends the metadata-only watches, stopFull the whole
	// ones (Reexclude).
	stopMetadata, stopFull context.CancelFunc
	// stopped is set once the kind is no longer watched (unwatchLocked).
	stopped bool
	// refusal is the error of the kind's last list or watch when the API
	// server refused it (403), "" once one succeeds.
	refusal string
}

// newKindWatch is the watch of kind gvk in namespaces.
func newKindWatch(gvk schema.GroupVersionKind, namespaces []string) *kindWatch {
	return &kindWatch{gvk: gvk, namespaces: namespaces}
}

// keys name w's watches of gvr, one per namespace (see watchKey).
func (w *kindWatch) keys(gvr schema.GroupVersionResource) []string {
	keys := make([]string, len(w.namespaces))
	for i, ns := range w.namespaces {
		keys[i] = watchKey(gvr, ns)
	}
	return keys
}

// watchMetadata starts the metadata-only informers of gvr, one per
// namespace of w, and returns their HasSynced.
func (c *Cache) watchMetadata(ctx context.Context, gvr schema.GroupVersionResource, w *kindWatch) cache.InformerSynced {
	ctx, stop := context.WithCancel(ctx)
	c.mu.Lock()
	w.stopMetadata = stop
	c.mu.Unlock()
	synced := make([]cache.InformerSynced, len(w.namespaces))
	for i, ns := range w.namespaces {
		resource := c.metadata.Resource(gvr).Namespace(ns)
		lw := c.listWatch(gvr, w, ns, c.metadata, func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
			return resource.List(ctx, opts)
		}, resource.Watch)
		synced[i] = c.run(ctx, lw, &metav1.PartialObjectMetadata{}, w.gvk, c.metadataTransform(gvr, w.gvk))
	}
	return c.syncedOrStopped(w, allSynced(synced))
}

// watchFull starts the informers of gvr's whole objects, one per namespace
// of w, and returns their HasSynced.
func (c *Cache) watchFull(ctx context.Context, gvr schema.GroupVersionResource, w *kindWatch) cache.InformerSynced {
	ctx, stop := context.WithCancel(ctx)
	c.mu.Lock()
	w.stopFull = stop
	c.mu.Unlock()
	synced := make([]cache.InformerSynced, len(w.namespaces))
	for i, ns := range w.namespaces {
		resource := c.dynamic.Resource(gvr).Namespace(ns)
		lw := c.listWatch(gvr, w, ns, c.dynamic, func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
			return resource.List(ctx, opts)
		}, resource.Watch)
		synced[i] = c.run(ctx, lw, &unstructured.Unstructured{}, w.gvk, transform(w.gvk, c.Tracking, c.opts.judges()))
	}
	return c.syncedOrStopped(w, allSynced(synced))
}

// listWatch is the ListerWatcher of one informer of w, the kind of gvr,
// in namespace ns: list and watch, which also record when they succeed
// and why they fail (see WatchStatus), and whether the API server refused
// them (see refused). client is the one they use, asked whether it
// supports watch-list semantics.
func (c *Cache) listWatch(gvr schema.GroupVersionResource, w *kindWatch, ns string, client any,
	list func(context.Context, metav1.ListOptions) (runtime.Object, error),
	watchFn func(context.Context, metav1.ListOptions) (watch.Interface, error)) cache.ListerWatcher {
	key := watchKey(gvr, ns)
	return cache.ToListWatcherWithWatchListSemantics(&cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
			obj, err := list(ctx, opts)
			c.health.record(ctx, key, "listing", err)
			c.access(ctx, gvr, w, err)
			return obj, err
		},
		WatchFuncWithContext: func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
			watcher, err := watchFn(ctx, opts)
			c.health.record(ctx, key, "watching", err)
			c.access(ctx, gvr, w, err)
			return watcher, err
		},
	}, client)
}

// access notes whether a list or watch of w was permitted: a refusal (see
// refused) or a success after one (see permittedAgain). The error of a
// call whose context ended says nothing.
func (c *Cache) access(ctx context.Context, gvr schema.GroupVersionResource, w *kindWatch, err error) {
	switch {
	case err == nil:
		c.permittedAgain(w)
	case ctx.Err() == nil && isRefusal(err):
		c.refused(gvr, w, err)
	}
}

// syncedOrStopped is synced, or true once w is no longer watched: a kind
// skipped or excluded while the cache fills must not hold it back.
func (c *Cache) syncedOrStopped(w *kindWatch, synced cache.InformerSynced) cache.InformerSynced {
	return func() bool {
		c.mu.RLock()
		stopped := w.stopped
		c.mu.RUnlock()
		return stopped || synced()
	}
}

// allSynced reports whether every informer of synced has synced.
func allSynced(synced []cache.InformerSynced) cache.InformerSynced {
	if len(synced) == 1 {
		return synced[0]
	}
	return func() bool {
		for _, s := range synced {
			if !s() {
				return false
			}
		}
		return true
	}
}

// run runs an informer until ctx ends. It is a plain informer, not a
// shared one: the cache is its only reader, and a shared informer would
// add a listener (a buffer and two goroutines) per kind between the watch
// and the handler.
func (c *Cache) run(ctx context.Context, lw cache.ListerWatcher, objectType runtime.Object, gvk schema.GroupVersionKind, transform cache.TransformFunc) cache.InformerSynced {
	_, informer := cache.NewInformerWithOptions(cache.InformerOptions{
		ListerWatcher: lw,
		ObjectType:    objectType,
		Handler:       c.handler(gvk),
		ResyncPeriod:  c.opts.Resync,
		Transform:     transform,
	})
	go informer.RunWithContext(ctx)
	return informer.HasSynced
}

// metadataTransform is the metadata-only informers' transform: it encodes
// each object for the cache (see storeMetadata) and asks for the kind to
// be watched whole when an Application tracks the object.
func (c *Cache) metadataTransform(gvr schema.GroupVersionResource, gvk schema.GroupVersionKind) cache.TransformFunc {
	return func(obj any) (any, error) {
		m, ok := obj.(*metav1.PartialObjectMetadata)
		if !ok {
			return obj, nil
		}
		s, owner, err := storeMetadata(gvk, m, c.Tracking())
		if err != nil {
			return nil, err
		}
		if owner != "" {
			c.wantFull(gvr)
		}
		return s, nil
	}
}

func (c *Cache) handler(gvk schema.GroupVersionKind) cache.ResourceEventHandler {
	isCRD := gvk.Group == "apiextensions.k8s.io" && gvk.Kind == "CustomResourceDefinition"
	// A changed Role or binding may permit a kind skipped for
	// resource.respectRBAC.
	isRBAC := gvk.Group == "rbac.authorization.k8s.io"
	changed := func() {
		if isCRD || (isRBAC && c.anySkipped()) {
			c.signalRediscover()
		}
	}
	return cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) {
			if s, ok := obj.(*stored); ok {
				c.upsert(s)
			}
			changed()
		},
		UpdateFunc: func(_, obj any) {
			if s, ok := obj.(*stored); ok {
				c.upsert(s)
			}
			changed()
		},
		DeleteFunc: func(obj any) {
			if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = tomb.Obj
			}
			if s, ok := obj.(*stored); ok {
				c.remove(s)
			}
			if isRBAC && c.anySkipped() {
				c.signalRediscover()
			}
		},
	}
}

// transform returns the informers' transform for kind gvk: it shrinks each
// freshly decoded object (see trim), sets its apiVersion and kind when the
// list it came in left them out, and encodes it for the informer and the
// cache to hold (see stored). Informers hand the transform objects nobody
// else holds yet, so it edits them in place; an object already stored
// passes through as it is.
func transform(gvk schema.GroupVersionKind, tracking func() Tracking, judge judges) cache.TransformFunc {
	return func(obj any) (any, error) {
		u, ok := obj.(*unstructured.Unstructured)
		if !ok {
			return obj, nil
		}
		if u.GroupVersionKind() != gvk {
			u.SetGroupVersionKind(gvk)
		}
		t := tracking() // one reading for both: an object is trimmed as it is tracked
		trim(u, t)
		return store(u, t, judge)
	}
}
