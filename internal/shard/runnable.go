package shard

import "context"

// Runnable is work the manager runs for the Application controllers: on
// every replica when replicas share the apps (OnEveryReplica), on the
// leader only when one replica does all of it. controller-runtime starts a
// runnable that does not say so on the leader only.
type Runnable struct {
	OnEveryReplica bool
	Run            func(ctx context.Context) error
}

// Start implements manager.Runnable.
func (r Runnable) Start(ctx context.Context) error { return r.Run(ctx) }

// NeedLeaderElection implements manager.LeaderElectionRunnable.
func (r Runnable) NeedLeaderElection() bool { return !r.OnEveryReplica }
