package application

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/version"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"

	"github.com/skiffcd/skiff/internal/clustercache"
	"github.com/skiffcd/skiff/internal/clusters"
	"github.com/skiffcd/skiff/internal/syncengine"
)

// The clusters apps deploy to, other than the local one, live here rather
// than in a package of their own: which are running follows which apps this
// controller compares (the first app starts a cluster's watch cache and
// sync client, the last one's going stops them), and their events and
// returns feed this controller's queues.

const (
	// clusterProbeInterval is how often a registered cluster in use is
	// asked for its version, to tell its apps when it becomes unreachable
	// and when it returns.
	clusterProbeInterval = 2 * time.Second
	clusterProbeTimeout  = 5 * time.Second
	// registryReadWait is how long an app waits again for the cluster
	// Secrets to be read at start.
	registryReadWait = 200 * time.Millisecond
)

// Connector builds the watch cache and the sync engine of registered
// cluster c reached through cfg, with the options of the local ones, the
// cache limited to where c's credentials may read (CacheOptions).
type Connector func(c clusters.Cluster, cfg *rest.Config) (*clustercache.Cache, *syncengine.Engine, error)

// errClusterNotReady marks a cluster whose watch cache is still filling.
var errClusterNotReady = errors.New("connecting")

// target is where an app's objects live: the watch cache and the sync
// engine of its cluster, and what its renders learn of it.
type target struct {
	cache  *clustercache.Cache
	engine *syncengine.Engine
	// isNamespaced asks the cluster whether a kind is namespaced.
	isNamespaced func(runtime.Object) (bool, error)
	caps         capabilities
}

// remote is a registered cluster in use: its watch cache, sync engine and
// reachability.
type remote struct {
	cluster clusters.Cluster
	target
	stop context.CancelFunc

	mu sync.Mutex
	// err is why the cluster is unreachable; nil when its last probe
	// answered.
	err error
	// capsRead says caps has been read; capsKinds is the number of kinds
	// the watch cache watched then, so that a kind the cache discovers
	// later (a CRD) makes the probe read caps again.
	capsRead  bool
	capsKinds int
	// version is the server version of the last probe that answered
	// (major.minor), probedAt when the last probe asked.
	version  string
	probedAt time.Time
}

// current is m's target with the capabilities last read.
func (m *remote) current() target {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.target
}

func (m *remote) state() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.err != nil {
		return fmt.Errorf("cluster %s is unreachable: %w", m.cluster.Name, m.err)
	}
	if failing := m.cache.WatchStatus().Failing; !m.cache.Synced() && len(failing) > 0 {
		// A kind the credentials may not list holds the cache back until
		// resource.respectRBAC skips it: say which.
		return fmt.Errorf("cluster %s: %w: %s", m.cluster.Name, errClusterNotReady, firstOf(failing))
	}
	if !m.cache.Synced() || !m.capsRead {
		return fmt.Errorf("cluster %s: %w", m.cluster.Name, errClusterNotReady)
	}
	return nil
}

// setCapabilities records caps, read while the cache watched kinds kinds,
// and reports whether they changed.
func (m *remote) setCapabilities(caps capabilities, kinds int) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	changed := m.capsRead && !m.caps.equal(caps)
	m.caps, m.capsRead, m.capsKinds = caps, true, kinds
	return changed
}

// capabilitiesStale says whether the capabilities, once read, may be out
// of date: the watch cache has discovered kinds since.
func (m *remote) capabilitiesStale() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.capsRead && m.cache.Kinds() != m.capsKinds
}

// setErr records a probe's outcome and reports whether reachability changed.
func (m *remote) setErr(err error) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	changed := (m.err == nil) != (err == nil)
	m.err = err
	return changed
}

// probed records a probe at at that answered v (nil on error) or err, and
// reports whether reachability changed.
func (m *remote) probed(v *version.Info, err error, at time.Time) bool {
	changed := m.setErr(err)
	m.mu.Lock()
	defer m.mu.Unlock()
	m.probedAt = at
	if v != nil {
		m.version = majorMinor(v.GitVersion)
	}
	return changed
}

// remoteSet holds the registered clusters in use and which app uses which.
type remoteSet struct {
	mu       sync.Mutex
	byServer map[string]*remote
	// appServer is the server of the registered cluster each app deploys
	// to; apps of the local cluster are absent.
	appServer map[string]string
	// localApps are the apps that deploy to the local cluster.
	localApps map[string]bool
}

// clustersRead reports whether the registry has read the cluster Secrets
// once: before, every registered destination would look unknown.
func (r *Reconciler) clustersRead() bool {
	s, ok := r.Clusters.(interface {
		Snapshot() (clusters.Snapshot, bool)
	})
	if !ok {
		return true
	}
	_, read := s.Snapshot()
	return read
}

// targetOf is the target of the app named app as its last validation found
// it: the local cluster's unless it deploys to a registered cluster, whose
// unreachability (or stop) is an error; the target has no cache only when
// the cluster was stopped.
func (r *Reconciler) targetOf(app string) (target, error) {
	r.remotes.mu.Lock()
	server, remoteApp := r.remotes.appServer[app]
	m := r.remotes.byServer[server]
	r.remotes.mu.Unlock()
	switch {
	case !remoteApp:
		return r.localTarget(), nil
	case m == nil: // stopped by clustersChanged; the next comparison decides
		return target{}, fmt.Errorf("cluster %s is not connected", server)
	}
	return m.current(), m.state()
}

func (r *Reconciler) localTarget() target {
	return target{cache: r.Cache, engine: r.Engine, isNamespaced: r.Client.IsObjectNamespaced,
		caps: capabilities{kubeVersion: r.kubeVersion, apiVersions: r.apiVersions}}
}

// useCluster records that app deploys to c and returns c's target,
// starting c's watch cache, sync engine and probe when app is the first
// to use it, and stopping those of the registered cluster app leaves when
// it was the last.
func (r *Reconciler) useCluster(app string, c clusters.Cluster) (target, error) {
	r.remotes.mu.Lock()
	if r.remotes.byServer == nil {
		r.remotes.byServer, r.remotes.appServer, r.remotes.localApps = map[string]*remote{}, map[string]string{}, map[string]bool{}
	}
	if c.IsInCluster() {
		r.releaseLocked(app)
		r.remotes.localApps[app] = true
		r.remotes.mu.Unlock()
		return r.localTarget(), nil
	}
	delete(r.remotes.localApps, app)
	if prev, ok := r.remotes.appServer[app]; ok && prev != c.Server {
		r.releaseLocked(app)
	}
	m := r.remotes.byServer[c.Server]
	if m == nil {
		var err error
		if m, err = r.startRemote(c); err != nil {
			r.remotes.mu.Unlock()
			return target{}, err
		}
		r.remotes.byServer[c.Server] = m
	}
	r.remotes.appServer[app] = c.Server
	r.remotes.mu.Unlock()
	return m.current(), m.state()
}

// releaseCluster forgets the cluster app used, stopping a registered one
// when no other app uses it.
func (r *Reconciler) releaseCluster(app string) {
	r.remotes.mu.Lock()
	defer r.remotes.mu.Unlock()
	delete(r.remotes.localApps, app)
	r.releaseLocked(app)
}

func (r *Reconciler) releaseLocked(app string) {
	server, ok := r.remotes.appServer[app]
	if !ok {
		return
	}
	delete(r.remotes.appServer, app)
	for _, s := range r.remotes.appServer {
		if s == server {
			return
		}
	}
	if m := r.remotes.byServer[server]; m != nil {
		m.stop()
		delete(r.remotes.byServer, server)
	}
}

// appsOn lists the apps that deploy to the registered cluster at server.
func (r *Reconciler) appsOn(server string) []string {
	r.remotes.mu.Lock()
	defer r.remotes.mu.Unlock()
	var apps []string
	for app, s := range r.remotes.appServer {
		if s == server {
			apps = append(apps, app)
		}
	}
	return apps
}

// startRemote connects to c: its watch cache fills in the background, and
// a probe tells c's apps when c becomes unreachable and when it returns.
func (r *Reconciler) startRemote(c clusters.Cluster) (*remote, error) {
	if r.Connect == nil {
		return nil, fmt.Errorf("cluster %s: this Skiff deploys only to the cluster it runs in", c.Name)
	}
	cfg, err := c.RESTConfig(nil)
	if err != nil {
		return nil, fmt.Errorf("cluster %s: %w", c.Name, err)
	}
	live, engine, err := r.Connect(c, cfg)
	if err != nil {
		return nil, fmt.Errorf("cluster %s: %w", c.Name, err)
	}
	live.SetTracking(context.Background(), r.tracking()) // empty yet: no reads

	probeCfg := rest.CopyConfig(cfg)
	probeCfg.Timeout = clusterProbeTimeout
	probe, err := discovery.NewDiscoveryClientForConfig(probeCfg)
	if err != nil {
		return nil, fmt.Errorf("cluster %s: %w", c.Name, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	m := &remote{cluster: c, stop: cancel,
		target: target{cache: live, engine: engine, isNamespaced: engine.Client.IsObjectNamespaced}}
	live.Subscribe(r.liveChange)
	go r.fill(ctx, m, probe)
	go r.probeLoop(ctx, m, probe)
	return m, nil
}

// fill starts m's watch cache and reads the cluster's capabilities, each
// again every clusterProbeInterval while the cluster does not answer, and
// compares m's apps once both are in.
func (r *Reconciler) fill(ctx context.Context, m *remote, disc discovery.DiscoveryInterface) {
	for {
		err := m.cache.Start(ctx)
		if err == nil {
			break
		}
		m.setErr(err)
		if !sleepCtx(ctx, clusterProbeInterval) {
			return
		}
	}
	for {
		caps, err := readCapabilities(disc)
		if err == nil {
			m.setCapabilities(caps, m.cache.Kinds())
			break
		}
		m.setErr(err)
		if !sleepCtx(ctx, clusterProbeInterval) {
			return
		}
	}
	r.compareAppsOn(m.cluster.Server)
}

// sleepCtx waits d, and reports false when ctx ended first.
func sleepCtx(ctx context.Context, d time.Duration) bool {
	select {
	case <-ctx.Done():
		return false
	case <-time.After(d):
		return true
	}
}

// probeLoop asks m's cluster for its version every clusterProbeInterval
// until ctx ends, and compares its apps when the answer changes from a
// version to an error or back. It reads the cluster's capabilities again
// when the cluster answers again (it may have been upgraded) and when its
// watch cache has discovered new kinds (CRDs), and compares the apps when
// they changed.
func (r *Reconciler) probeLoop(ctx context.Context, m *remote, disc discovery.DiscoveryInterface) {
	wait.UntilWithContext(ctx, func(context.Context) {
		v, err := disc.ServerVersion()
		changed := m.probed(v, err, time.Now())
		if err == nil && (changed || m.capabilitiesStale()) {
			kinds := m.cache.Kinds()
			if caps, err := readCapabilities(disc); err == nil && m.setCapabilities(caps, kinds) {
				changed = true
			}
		}
		if changed {
			r.compareAppsOn(m.cluster.Server)
		}
	}, clusterProbeInterval)
}

func (r *Reconciler) compareAppsOn(server string) {
	for _, app := range r.appsOn(server) {
		r.compareNow.offer(r.Namespace, app)
	}
}

// clustersChanged stops the registered clusters in use whose registration
// changed or went (new credentials, limits) and compares their apps, whose
// next comparison starts them again as registered now, or reports them
// gone.
func (r *Reconciler) clustersChanged() {
	now := map[string]clusters.Cluster{}
	for _, c := range r.Clusters.List() {
		now[c.Server] = c
	}
	var changed []string
	r.remotes.mu.Lock()
	for server, m := range r.remotes.byServer {
		if c, ok := now[server]; !ok || !reflect.DeepEqual(c, m.cluster) {
			m.stop()
			delete(r.remotes.byServer, server)
			changed = append(changed, server)
		}
	}
	r.remotes.mu.Unlock()
	for _, server := range changed {
		r.compareAppsOn(server)
	}
}

// stopClusters stops every registered cluster in use.
func (r *Reconciler) stopClusters() {
	r.remotes.mu.Lock()
	defer r.remotes.mu.Unlock()
	for server, m := range r.remotes.byServer {
		m.stop()
		delete(r.remotes.byServer, server)
	}
}
