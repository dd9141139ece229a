// Package clustercache keeps a watch-based view of the live objects Skiff
// manages: every listable kind the API server serves (CRDs added later
// included), indexed by owning Application and by owner reference for the
// resource tree. Comparisons and health checks read it, so steady state
// costs no API call per object.
//
// A kind is watched as metadata only until an object of it turns out to be
// tracked by an Application, and whole from then on (see kindWatch). The
// objects of whole watches are trimmed before they are stored (see trim):
// an object no Application tracks keeps only its apiVersion, kind and
// metadata (without managedFields), and a tracked object keeps only the
// managedFields entries of managers other than Skiff, which
// ignoreDifferences' managedFieldsManagers reads. GetFull reads an
// untracked object whole from the API server. Objects are held as JSON and
// decoded on each read (see stored), so every reader gets a copy of its
// own.
package clustercache

import (
	"cmp"
	"context"
	"crypto/sha256"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"

	"github.com/skiffcd/skiff/internal/diff"
	"github.com/skiffcd/skiff/internal/digest"
)

// ResourceKey identifies a live object.
type ResourceKey struct {
	Group, Kind, Namespace, Name string
}

func (k ResourceKey) String() string {
	return fmt.Sprintf("%s/%s:%s/%s", k.Group, k.Kind, k.Namespace, k.Name)
}

// KeyOf returns the key of obj.
func KeyOf(obj *unstructured.Unstructured) ResourceKey {
	gvk := obj.GroupVersionKind()
	return ResourceKey{Group: gvk.Group, Kind: gvk.Kind, Namespace: obj.GetNamespace(), Name: obj.GetName()}
}

// Event tells a subscriber that a live object changed. App is the owning
// Application before or after the change ("" when none).
type Event struct {
	App     string
	Key     ResourceKey
	Deleted bool
	// HealthChanged reports an update of a tracked object that Options.Health
	// judges otherwise than its previous version.
	HealthChanged bool
}

// Options configure a Cache.
type Options struct {
	// Tracking says how objects are tied to Applications; default annotation.
	Tracking TrackingMode
	// Exclude lists kinds not to watch, in addition to the noisy defaults
	// (Events, Leases, Endpoints, EndpointSlices).
	Exclude []schema.GroupKind
	// Resync is the informers' resync period; 0 disables resyncs.
	Resync time.Duration
	// Health, when set, judges each tracked object as it is stored, for
	// Event.HealthChanged.
	Health func(*unstructured.Unstructured) string
}

// defaultExcluded are kinds that change constantly and that no GitOps
// source manages; Argo CD excludes them too.
var defaultExcluded = []schema.GroupKind{
	{Kind: "Event"}, {Group: "events.k8s.io", Kind: "Event"},
	{Group: "coordination.k8s.io", Kind: "Lease"},
	{Kind: "Endpoints"}, {Group: "discovery.k8s.io", Kind: "EndpointSlice"},
	{Kind: "ComponentStatus"}, {Kind: "Binding"},
	{Group: "metrics.k8s.io", Kind: "PodMetrics"}, {Group: "metrics.k8s.io", Kind: "NodeMetrics"},
}

// Cache is the live view. Create it with New and Start it once.
type Cache struct {
	opts      Options
	dynamic   dynamic.Interface
	discovery discovery.DiscoveryInterface
	metadata  metadata.Interface
	excluded  map[schema.GroupKind]bool

	mu          sync.RWMutex
	objects     map[ResourceKey]*stored
	byApp       map[string]map[ResourceKey]bool
	children    map[types.UID]map[ResourceKey]bool
	watched     map[schema.GroupVersionResource]*kindWatch
	subscribers []func(Event)

	// upgradeMu serialises upgrades, so a kind gets one full watch.
	upgradeMu sync.Mutex
	upgrades  chan struct{}

	rediscover chan struct{}
	synced     chan struct{}
}

// New returns a Cache for the cluster behind cfg.
func New(cfg *rest.Config, opts Options) (*Cache, error) {
	if opts.Tracking == "" {
		opts.Tracking = TrackingAnnotationMode
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("building dynamic client: %w", err)
	}
	disc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("building discovery client: %w", err)
	}
	meta, err := metadata.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("building metadata client: %w", err)
	}
	excluded := map[schema.GroupKind]bool{}
	for _, gk := range append(append([]schema.GroupKind{}, defaultExcluded...), opts.Exclude...) {
		excluded[gk] = true
	}
	return &Cache{
		opts: opts, dynamic: dyn, discovery: disc, metadata: meta, excluded: excluded,
		objects:    map[ResourceKey]*stored{},
		byApp:      map[string]map[ResourceKey]bool{},
		children:   map[types.UID]map[ResourceKey]bool{},
		watched:    map[schema.GroupVersionResource]*kindWatch{},
		upgrades:   make(chan struct{}, 1),
		rediscover: make(chan struct{}, 1),
		synced:     make(chan struct{}),
	}, nil
}

// Subscribe registers fn to be called after every change. Call it before
// Start; fn must not block.
func (c *Cache) Subscribe(fn func(Event)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.subscribers = append(c.subscribers, fn)
}

// Start discovers the served kinds, watches them and waits until the
// initial lists are in. The watches, including those of kinds added later
// (CRDs), run until ctx ends.
func (c *Cache) Start(ctx context.Context) error {
	if err := c.discover(ctx); err != nil {
		return err
	}
	close(c.synced)
	go c.rediscoverLoop(ctx)
	go c.upgradeLoop(ctx)
	return nil
}

// Synced reports whether Start has filled the cache.
func (c *Cache) Synced() bool {
	select {
	case <-c.synced:
		return true
	default:
		return false
	}
}

// WaitForSync blocks until Start has filled the cache, or ctx ends.
// Decisions taken on an empty cache would see every object as missing.
func (c *Cache) WaitForSync(ctx context.Context) error {
	select {
	case <-c.synced:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("waiting for the cluster cache: %w", ctx.Err())
	}
}

// Get returns the live object with key: a copy of its own.
func (c *Cache) Get(key ResourceKey) (*unstructured.Unstructured, bool) {
	c.mu.RLock()
	s, ok := c.objects[key]
	c.mu.RUnlock()
	if !ok {
		return nil, false
	}
	return s.object(), true
}

// GetFull returns the whole live object with key: the cached copy when an
// Application tracks it (stored whole), else, when the cache has seen it,
// a read from the API server (the cache keeps only the metadata of
// untracked objects). Not found is (nil, false, nil).
func (c *Cache) GetFull(ctx context.Context, key ResourceKey) (*unstructured.Unstructured, bool, error) {
	c.mu.RLock()
	s, ok := c.objects[key]
	c.mu.RUnlock()
	if !ok {
		return nil, false, nil
	}
	if s.app != "" {
		return s.object(), true, nil
	}
	gvr, ok := c.resourceOf(schema.GroupKind{Group: key.Group, Kind: key.Kind})
	if !ok {
		return nil, false, fmt.Errorf("reading %s: its kind is not watched", key)
	}
	live, err := c.dynamic.Resource(gvr).Namespace(key.Namespace).Get(ctx, key.Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("reading %s: %w", key, err)
	}
	return live, true, nil
}

// resourceOf returns the watched resource of kind gk.
func (c *Cache) resourceOf(gk schema.GroupKind) (schema.GroupVersionResource, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	for gvr, w := range c.watched {
		if w.gvk.GroupKind() == gk {
			return gvr, true
		}
	}
	return schema.GroupVersionResource{}, false
}

// AppObjects returns the live objects tracked to app, sorted by key: copies
// of their own.
func (c *Cache) AppObjects(app string) []*unstructured.Unstructured {
	c.mu.RLock()
	found := c.lookupLocked(c.byApp[app])
	c.mu.RUnlock()
	return decodeAll(found)
}

// Versions returns a digest of the versions of the objects tracked to app
// and of the objects keys name, tracked or not: it changes whenever one of
// them is created, updated, deleted or tracked to another app (written
// ones included: Record stores their versions), and costs no decoding. A
// comparison takes it before reading the live objects, so that a change it
// may have missed shows as a new digest the next time.
func (c *Cache) Versions(app string, keys []ResourceKey) [sha256.Size]byte {
	c.mu.RLock()
	all := make(map[ResourceKey]bool, len(c.byApp[app])+len(keys))
	for k := range c.byApp[app] {
		all[k] = true
	}
	for _, k := range keys {
		all[k] = true
	}
	sorted := make([]ResourceKey, 0, len(all))
	for k := range all {
		sorted = append(sorted, k)
	}
	slices.SortFunc(sorted, func(a, b ResourceKey) int {
		return cmp.Or(strings.Compare(a.Group, b.Group), strings.Compare(a.Kind, b.Kind),
			strings.Compare(a.Namespace, b.Namespace), strings.Compare(a.Name, b.Name))
	})
	fields := make([]string, 0, 7*len(sorted))
	for _, k := range sorted {
		fields = append(fields, k.Group, k.Kind, k.Namespace, k.Name)
		if s, ok := c.objects[k]; ok {
			fields = append(fields, "live", s.meta.ResourceVersion, s.app)
		} else {
			fields = append(fields, "absent", "", "")
		}
	}
	c.mu.RUnlock()
	return digest.Strings(fields...)
}

// lookupLocked returns the stored objects of keys, sorted by key.
func (c *Cache) lookupLocked(keys map[ResourceKey]bool) []*stored {
	sorted := make([]ResourceKey, 0, len(keys))
	for k := range keys {
		sorted = append(sorted, k)
	}
	sortKeys(sorted)
	out := make([]*stored, 0, len(sorted))
	for _, k := range sorted {
		out = append(out, c.objects[k])
	}
	return out
}

// decodeAll decodes objects outside the cache's lock.
func decodeAll(objects []*stored) []*unstructured.Unstructured {
	out := make([]*unstructured.Unstructured, len(objects))
	for i, s := range objects {
		out[i] = s.object()
	}
	return out
}

// Children returns the objects whose ownerReferences name uid (a
// Deployment's ReplicaSets, a ReplicaSet's Pods), sorted by key.
func (c *Cache) Children(uid types.UID) []*unstructured.Unstructured {
	c.mu.RLock()
	found := c.lookupLocked(c.children[uid])
	c.mu.RUnlock()
	return decodeAll(found)
}

// Watches reports whether the kind is watched (known to the API server and
// not excluded).
func (c *Cache) Watches(gk schema.GroupKind) bool {
	_, ok := c.resourceOf(gk)
	return ok
}

// Len returns the number of cached objects.
func (c *Cache) Len() int {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return len(c.objects)
}

func sortKeys(keys []ResourceKey) {
	sort.Slice(keys, func(i, j int) bool { return keys[i].String() < keys[j].String() })
}

// trim drops from u, in place, what the cache's readers do not need. An
// object no Application tracks (most of them: Pods, ReplicaSets,
// EndpointSlices, the namespaces' own ConfigMaps and ServiceAccounts) is
// kept as apiVersion, kind and metadata without managedFields: its
// readers want its existence, owners, labels and annotations, and GetFull
// reads it whole from the API server for the rare comparison that needs
// its body (an app about to adopt it). A tracked object is kept whole but
// for Skiff's own managedFields entry, which the diff skips; the entries of
// other managers stay for ignoreDifferences.managedFieldsManagers. u is
// left untouched when nothing is to be dropped.
func trim(u *unstructured.Unstructured, tracking TrackingMode) {
	md, ok := u.Object["metadata"].(map[string]any)
	if !ok {
		return
	}
	if OwningApp(u, tracking) == "" {
		for k := range u.Object {
			if k != "apiVersion" && k != "kind" && k != "metadata" {
				delete(u.Object, k)
			}
		}
		// delete writes to the map even when the key is absent, and an
		// object already trimmed may be read concurrently.
		//lint:ignore S1033 the guard keeps a trimmed object unwritten
		if _, ok := md["managedFields"]; ok {
			delete(md, "managedFields")
		}
		return
	}
	entries, ok := md["managedFields"]
	if !ok {
		return
	}
	list, _ := entries.([]any)
	if len(list) == 0 {
		delete(md, "managedFields")
		return
	}
	kept := make([]any, 0, len(list))
	for _, e := range list {
		if m, ok := e.(map[string]any); ok && m["manager"] == diff.FieldManager {
			continue
		}
		kept = append(kept, e)
	}
	switch {
	case len(kept) == len(list):
	case len(kept) == 0:
		delete(md, "managedFields")
	default:
		md["managedFields"] = kept
	}
}
