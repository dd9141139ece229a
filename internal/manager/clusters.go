package manager

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/skiffcd/skiff/internal/clusters"
	"github.com/skiffcd/skiff/internal/controller/application"
	"github.com/skiffcd/skiff/internal/shard"
)

// clusterStatesAnnotation holds, on each member's Lease, the states of the
// clusters its apps deploy to (JSON).
const clusterStatesAnnotation = "skiff.io/cluster-states"

// publishStates has each renewal of this replica's Lease carry the states
// of the clusters it follows (those it holds apps of).
func publishStates(members *shard.Membership, apps *application.Reconciler) {
	members.Annotations = func() map[string]string {
		var followed []clusters.State
		for _, s := range apps.ClusterStates() {
			if s.Info.ApplicationsCount > 0 {
				followed = append(followed, s)
			}
		}
		data, err := json.Marshal(followed)
		if err != nil {
			return nil
		}
		return map[string]string{clusterStatesAnnotation: string(data)}
	}
}

// sharedStates gives the API server the clusters' states that the live
// replicas published on their Leases, merged: each replica follows the
// clusters of its own share of the apps. They are at most a retry period
// old.
type sharedStates struct{ members *shard.Membership }

// ClusterStates implements clusterops.States.
func (s sharedStates) ClusterStates(ctx context.Context) ([]clusters.State, error) {
	published, err := s.members.Published(ctx, clusterStatesAnnotation)
	if err != nil {
		return nil, err
	}
	var reports [][]clusters.State
	for member, data := range published {
		var states []clusters.State
		if err := json.Unmarshal([]byte(data), &states); err != nil {
			return nil, fmt.Errorf("the cluster states of replica %s: %w", member, err)
		}
		reports = append(reports, states)
	}
	return clusters.MergeStates(reports...), nil
}

// localCacheNamespaces limit the local cluster cache: to Skiff's own
// namespace when namespaced (it then watches no cluster-scoped kind), to
// none otherwise.
func localCacheNamespaces(opts Options) []string {
	if ns := managedNamespace(opts); ns != "" {
		return []string{ns}
	}
	return nil
}

// errNotLeading is why a standby replica knows no cluster's state.
var errNotLeading = errors.New("the controllers run on the leading replica")

// electedStates gives the API server the clusters' states of this
// replica's Application controller, which follows them only while it runs
// the controllers (it leads, or there is no election).
type electedStates struct {
	elected <-chan struct{}
	local   *application.Reconciler
}

// ClusterStates implements clusterops.States.
func (e electedStates) ClusterStates(context.Context) ([]clusters.State, error) {
	select {
	case <-e.elected:
		return e.local.ClusterStates(), nil
	default:
		return nil, errNotLeading
	}
}
