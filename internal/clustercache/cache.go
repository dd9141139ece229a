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
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	authorizationv1client "k8s.io/client-go/kubernetes/typed/authorization/v1"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
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
	// Tracking says how objects are tied to Applications at the start
	// (SetTracking changes it); default DefaultTracking.
	Tracking Tracking
	// Exclude lists kinds not to watch, in addition to the noisy defaults
	// (Events, Leases, Endpoints, EndpointSlices).
	Exclude []schema.GroupKind
	// Excluded, when set, also leaves out the kinds it reports (argocd-cm's
	// resource.exclusions and inclusions); it may change its answers, and
	// Reexclude applies the change.
	Excluded func(schema.GroupKind) bool
	// Resync is the informers' resync period; 0 disables resyncs.
	Resync time.Duration
	// Health, when set, judges each tracked object as it is stored, for
	// Event.HealthChanged.
	Health func(*unstructured.Unstructured) string
	// Fingerprint, when set, digests each tracked object as it is stored
	// without the fields whose updates do not concern its app (argocd-cm's
	// ignoreResourceUpdates); "" means every update concerns it. An update
	// that keeps a tracked object's fingerprint, app and health is stored
	// without telling subscribers (see quietUpdate).
	Fingerprint func(*unstructured.Unstructured) string
	// Namespaces, when set, limit the cache to the namespaced kinds'
	// objects in those namespaces, each kind watched once per namespace,
	// and leave out cluster-scoped kinds unless ClusterResources: what a
	// namespaced install (skiff server --namespaced) or the credentials of
	// a cluster Secret limited to namespaces may read.
	Namespaces []string
	// ClusterResources, with Namespaces set, watches cluster-scoped kinds
	// too (a cluster Secret's clusterResources: "true").
	ClusterResources bool
	// RespectRBAC, when set, answers argocd-cm's resource.respectRBAC in
	// force: "", RespectRBACNormal or RespectRBACStrict (see rbac.go); it
	// may change its answer, and RecheckRBAC applies the change.
	RespectRBAC func() string
	// Log receives the kinds skipped and watched again for
	// resource.respectRBAC; default controller-runtime's logger.
	Log logr.Logger
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
	reviews   authorizationv1client.SelfSubjectAccessReviewInterface
	excluded  map[schema.GroupKind]bool

	mu          sync.RWMutex
	tracking    Tracking
	objects     map[ResourceKey]*stored
	byApp       map[string]map[ResourceKey]bool
	children    map[types.UID]map[ResourceKey]bool
	watched     map[schema.GroupVersionResource]*kindWatch
	subscribers []func(Event)
	// dropped are the kinds Reexclude or skip stopped watching: late
	// events of their informers are ignored.
	dropped map[schema.GroupKind]bool
	// skipped are the kinds not watched for resource.respectRBAC, with
	// why (see rbac.go).
	skipped map[schema.GroupKind]string

	// upgradeMu serialises upgrades, so a kind gets one full watch.
	upgradeMu sync.Mutex
	upgrades  chan struct{}

	rediscover chan struct{}
	synced     chan struct{}

	health watchHealth
}

// New returns a Cache for the cluster behind cfg.
func New(cfg *rest.Config, opts Options) (*Cache, error) {
	opts.Tracking = opts.Tracking.withDefaults()
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
	access, err := authorizationv1client.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("building authorization client: %w", err)
	}
	if opts.Log.GetSink() == nil {
		opts.Log = logf.Log.WithName("clustercache")
	}
	excluded := map[schema.GroupKind]bool{}
	for _, gk := range append(append([]schema.GroupKind{}, defaultExcluded...), opts.Exclude...) {
		excluded[gk] = true
	}
	return &Cache{
		opts: opts, dynamic: dyn, discovery: disc, metadata: meta, reviews: access.SelfSubjectAccessReviews(), excluded: excluded,
		tracking:   opts.Tracking,
		objects:    map[ResourceKey]*stored{},
		byApp:      map[string]map[ResourceKey]bool{},
		children:   map[types.UID]map[ResourceKey]bool{},
		watched:    map[schema.GroupVersionResource]*kindWatch{},
		dropped:    map[schema.GroupKind]bool{},
		skipped:    map[schema.GroupKind]string{},
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
