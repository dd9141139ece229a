package manager

import (
	"context"
	"errors"

	"github.com/skiffcd/skiff/internal/clusters"
	"github.com/skiffcd/skiff/internal/controller/application"
)

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
