package application

import (
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilversion "k8s.io/apimachinery/pkg/util/version"

	"github.com/skiffcd/skiff/internal/clustercache"
	"github.com/skiffcd/skiff/internal/clusters"
)

// ClusterStates returns the state of every cluster the registry knows,
// the in-cluster one included, as this controller sees it: a cluster an
// app of it deploys to has its connection, version, cache and app count;
// another is Unknown, not monitored.
func (r *Reconciler) ClusterStates() []clusters.State {
	list := []clusters.Cluster{clusters.InCluster()}
	if r.Clusters != nil {
		list = r.Clusters.List()
	}
	r.remotes.mu.Lock()
	apps := map[string]int{}
	for _, server := range r.remotes.appServer {
		apps[server]++
	}
	localApps := len(r.remotes.localApps)
	inUse := make(map[string]*remote, len(r.remotes.byServer))
	for server, m := range r.remotes.byServer {
		inUse[server] = m
	}
	r.remotes.mu.Unlock()

	out := make([]clusters.State, 0, len(list))
	for _, c := range list {
		switch m := inUse[c.Server]; {
		case c.IsInCluster():
			out = append(out, r.localState(c.Server, localApps))
		case m != nil:
			out = append(out, m.clusterState(apps[c.Server]))
		default:
			out = append(out, clusters.UnknownState(c.Server, clusters.NotMonitored))
		}
	}
	return out
}

// localState is the state of the cluster Skiff runs in, used by apps apps.
// Nothing probes it: Skiff's own API calls would fail first.
func (r *Reconciler) localState(server string, apps int) clusters.State {
	status, msg := connection(nil, r.Cache.Synced(), r.Cache.WatchStatus().Failing, r.Cache.Skipped())
	return clusters.State{Server: server, Info: clusters.Info{
		ConnectionState:   clusters.ConnectionState{Status: status, Message: msg},
		ServerVersion:     majorMinor(r.kubeVersion),
		CacheInfo:         cacheInfo(r.Cache),
		ApplicationsCount: apps,
	}}
}

// clusterState is the state of registered cluster m, used by apps apps.
func (m *remote) clusterState(apps int) clusters.State {
	m.mu.Lock()
	probeErr, filled, v, at := m.err, m.capsRead && m.cache.Synced(), m.version, m.probedAt
	m.mu.Unlock()
	status, msg := connection(probeErr, filled, m.cache.WatchStatus().Failing, m.cache.Skipped())
	return clusters.State{Server: m.cluster.Server, Info: clusters.Info{
		ConnectionState:   clusters.ConnectionState{Status: status, Message: msg, AttemptedAt: timeOrNil(at)},
		ServerVersion:     v,
		CacheInfo:         cacheInfo(m.cache),
		ApplicationsCount: apps,
	}}
}

// connection is a cluster's connection status and message: Failed while
// it does not answer (probeErr) or, before its watch cache is filled,
// while a watch fails (refused credentials: failing); Unknown while the
// cache fills; Successful once it is filled and the cluster answers,
// naming the kinds skipped for resource.respectRBAC.
func connection(probeErr error, filled bool, failing, skipped []string) (status, message string) {
	switch {
	case probeErr != nil:
		return clusters.ConnectionFailed, probeErr.Error()
	case !filled && len(failing) > 0:
		return clusters.ConnectionFailed, firstOf(failing)
	case !filled:
		return clusters.ConnectionUnknown, "connecting: the watch cache is filling"
	case len(skipped) > 0:
		return clusters.ConnectionSuccessful, "not watched for resource.respectRBAC: " + firstOf(skipped)
	}
	return clusters.ConnectionSuccessful, ""
}

// firstOf is the first of msgs, counting the others.
func firstOf(msgs []string) string {
	msg := msgs[0]
	if len(msgs) > 1 {
		msg += fmt.Sprintf(" (and %d more)", len(msgs)-1)
	}
	return msg
}

func cacheInfo(c *clustercache.Cache) clusters.CacheInfo {
	return clusters.CacheInfo{ResourcesCount: c.Len(), APIsCount: c.Kinds(), LastCacheSyncTime: timeOrNil(c.WatchStatus().LastSync)}
}

func timeOrNil(t time.Time) *metav1.Time {
	if t.IsZero() {
		return nil
	}
	return &metav1.Time{Time: t}
}

// majorMinor is a server's git version as Argo CD shows it, major.minor
// ("v1.35.2" is "1.35"); a version it cannot read stays as it is.
func majorMinor(gitVersion string) string {
	v, err := utilversion.ParseGeneric(gitVersion)
	if err != nil {
		return gitVersion
	}
	return fmt.Sprintf("%d.%d", v.Major(), v.Minor())
}
