package clusters

import (
	"maps"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Connection statuses, as Argo CD names them.
const (
	ConnectionSuccessful = "Successful"
	ConnectionFailed     = "Failed"
	ConnectionUnknown    = "Unknown"
)

// NotMonitored is the message of a cluster no app uses, whose state
// nothing follows: Argo CD's.
const NotMonitored = "Cluster has no applications and is not being monitored."

// State is a cluster as the Application controller connected to it sees
// it: plain data, with the JSON names of Argo CD's cluster `info`.
type State struct {
	// Server identifies the cluster.
	Server string `json:"server"`
	Info   Info   `json:"info"`
}

// Info is Argo CD's ClusterInfo.
type Info struct {
	ConnectionState ConnectionState `json:"connectionState"`
	// ServerVersion is the cluster's Kubernetes version, major.minor
	// ("1.35"); empty while unknown.
	ServerVersion string    `json:"serverVersion,omitempty"`
	CacheInfo     CacheInfo `json:"cacheInfo"`
	// ApplicationsCount is the number of apps the controller compares
	// against the cluster.
	ApplicationsCount int `json:"applicationsCount"`
}

// ConnectionState is Argo CD's ConnectionState. The message never holds
// credentials: it is an error of the client, which names no token.
type ConnectionState struct {
	// Status is ConnectionSuccessful, ConnectionFailed or ConnectionUnknown.
	Status  string `json:"status"`
	Message string `json:"message,omitempty"`
	// AttemptedAt is when the cluster was last asked (its version).
	AttemptedAt *metav1.Time `json:"attemptedAt,omitempty"`
}

// CacheInfo is Argo CD's ClusterCacheInfo: the cluster's watch cache.
type CacheInfo struct {
	// ResourcesCount is the number of objects it holds.
	ResourcesCount int `json:"resourcesCount,omitempty"`
	// APIsCount is the number of kinds it watches.
	APIsCount int `json:"apisCount,omitempty"`
	// LastCacheSyncTime is when one of its watches last listed, or
	// started or restarted watching, without an error.
	LastCacheSyncTime *metav1.Time `json:"lastCacheSyncTime,omitempty"`
}

// UnknownState is the state of a cluster nothing follows, with message
// (NotMonitored when no app uses it).
func UnknownState(server, message string) State {
	return State{Server: server, Info: Info{ConnectionState: ConnectionState{Status: ConnectionUnknown, Message: message}}}
}

// MergeStates joins the states that several replicas report, each for the
// clusters whose apps it holds: a cluster whose apps are split over
// replicas is Failed when any replica fails to reach it (with that
// replica's message), else Successful when any reached it; its apps are
// the replicas' sum and its cache the most recent and largest any replica
// holds. The result is in server order.
func MergeStates(reports ...[]State) []State {
	byServer := map[string]State{}
	for _, report := range reports {
		for _, s := range report {
			merged, seen := byServer[s.Server]
			if !seen {
				byServer[s.Server] = s
				continue
			}
			byServer[s.Server] = mergeState(merged, s)
		}
	}
	out := make([]State, 0, len(byServer))
	for _, server := range slices.Sorted(maps.Keys(byServer)) {
		out = append(out, byServer[server])
	}
	return out
}

func mergeState(a, b State) State {
	if connectionRank(b.Info.ConnectionState.Status) > connectionRank(a.Info.ConnectionState.Status) {
		a.Info.ConnectionState = b.Info.ConnectionState
	}
	if a.Info.ServerVersion == "" {
		a.Info.ServerVersion = b.Info.ServerVersion
	}
	a.Info.ApplicationsCount += b.Info.ApplicationsCount
	a.Info.CacheInfo.ResourcesCount = max(a.Info.CacheInfo.ResourcesCount, b.Info.CacheInfo.ResourcesCount)
	a.Info.CacheInfo.APIsCount = max(a.Info.CacheInfo.APIsCount, b.Info.CacheInfo.APIsCount)
	if t := b.Info.CacheInfo.LastCacheSyncTime; t != nil && (a.Info.CacheInfo.LastCacheSyncTime == nil || a.Info.CacheInfo.LastCacheSyncTime.Before(t)) {
		a.Info.CacheInfo.LastCacheSyncTime = t
	}
	return a
}

// connectionRank orders statuses by which one a merged state shows: a
// failure anywhere is news.
func connectionRank(status string) int {
	switch status {
	case ConnectionFailed:
		return 2
	case ConnectionSuccessful:
		return 1
	}
	return 0
}
