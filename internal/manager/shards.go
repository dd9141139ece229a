package manager

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/google/uuid"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/skiffcd/skiff/api/v1alpha1"
	"github.com/skiffcd/skiff/internal/clusters"
	"github.com/skiffcd/skiff/internal/shard"
)

// addShards makes this replica a member of those that share the
// Applications (internal/shard), with the lease timings of the leader
// election: with --leader-elect every replica runs the Application
// controllers on its share of the apps, and the leader alone runs the
// Rollout, AnalysisRun and notification controllers.
func addShards(mgr ctrl.Manager, opts Options, registry clusters.Registry) (*shard.Sharder, error) {
	host, err := os.Hostname()
	if err != nil {
		return nil, fmt.Errorf("naming this replica: %w", err)
	}
	members := &shard.Membership{
		Client: mgr.GetClient(), Reader: mgr.GetAPIReader(),
		Namespace: opts.Namespace, Identity: host + "_" + uuid.NewString(),
		LeaseDuration: opts.LeaseDuration, RenewDeadline: opts.RenewDeadline, RetryPeriod: opts.RetryPeriod,
		Log: mgr.GetLogger().WithName("shard"),
	}
	sharder := &shard.Sharder{
		Members:   members,
		Informers: mgr.GetCache(),
		Namespace: opts.Namespace,
		Resolve: func(dest v1alpha1.ApplicationDestination) (string, *int) {
			c, err := registry.Resolve(dest)
			if err != nil {
				return "", nil
			}
			return c.Server, c.Shard
		},
	}
	registry.Subscribe(sharder.Changed)
	if err := mgr.Add(members); err != nil {
		return nil, err
	}
	return sharder, mgr.Add(sharder)
}

// appOwner tells whether this replica acts on an app: when replicas share
// the work, whether it owns it; else whether it leads.
func appOwner(mgr ctrl.Manager, shards *shard.Sharder) func(app string) bool {
	if shards != nil {
		return shards.Owns
	}
	elected := mgr.Elected()
	return func(string) bool {
		select {
		case <-elected:
			return true
		default:
			return false
		}
	}
}

// appControllersRun is closed once this replica runs the Application
// controllers: at once when replicas share them, else when it leads.
func appControllersRun(mgr ctrl.Manager, shards *shard.Sharder) <-chan struct{} {
	if shards == nil {
		return mgr.Elected()
	}
	always := make(chan struct{})
	close(always)
	return always
}

// releaseShare gives up this replica's share once the manager has stopped
// cleanly (every controller's workers have returned): the other replicas
// take its apps at their next listing, a retry period, instead of after
// the lease duration, so a rolling update barely pauses them. A manager
// that did not stop cleanly leaves its Lease to expire.
func releaseShare(members *shard.Membership) error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return members.Release(ctx)
}
