package clusters

import (
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
