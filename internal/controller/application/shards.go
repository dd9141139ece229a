package application

import (
	"context"
	"errors"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Shards is the share of the apps this replica acts on, when replicas
// share the work (internal/shard).
type Shards interface {
	// Owns reports whether this replica acts on the app named app now.
	Owns(app string) bool
	// Subscribe calls fn with the apps this replica may act on from now
	// (gained) and those it must stop acting on (lost).
	Subscribe(fn func(gained, lost []string))
}

// errAppMoved cancels an operation or a comparison whose app another
// replica took over.
var errAppMoved = errors.New("the app moved to another replica")

// takeOverWait bounds how long queuing the apps a replica gained may wait
// for the queues.
const takeOverWait = 5 * time.Minute

func (r *Reconciler) owns(app string) bool {
	return r.Shards == nil || r.Shards.Owns(app)
}

// shardsMoved stops the work on the apps this replica lost at once (their
// new owner waits for that; see shard.Sharder) and queues a comparison and
// an operation check of those it gained: their events came and went while
// another replica owned them.
func (r *Reconciler) shardsMoved(gained, lost []string) {
	for _, app := range lost {
		if cancel, ok := r.running.Load(app); ok {
			cancel(errAppMoved)
		}
		if cancel, ok := r.comparing.Load(app); ok {
			cancel(errAppMoved)
		}
		r.forgetApp(client.ObjectKey{Namespace: r.Namespace, Name: app})
	}
	if len(gained) == 0 {
		return
	}
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), takeOverWait)
		defer cancel()
		for _, app := range gained {
			if r.compareNow.send(ctx, r.Namespace, app) != nil || r.operateNow.send(ctx, r.Namespace, app) != nil {
				return
			}
		}
	}()
}

// forgetApp drops what this replica keeps of an app it no longer acts on
// (deleted, or owned by another replica): its metric series, poll,
// remembered comparisons and its cluster's use.
func (r *Reconciler) forgetApp(key client.ObjectKey) {
	forgetAppSeries(key.Namespace, key.Name)
	r.polls.forget(key.Name)
	r.hardRefreshes.forget(key.Name)
	r.diffs.Forget(key.Name)
	r.compared.forget(key.Name)
	r.operationStarts.forget(key)
	r.releaseCluster(key.Name)
}

// forgetSeriesIfLost drops the metric series of an app this replica lost
// while a reconcile of it ran: the reconcile's end would otherwise put
// back what shardsMoved removed, and two replicas would report the app.
func (r *Reconciler) forgetSeriesIfLost(key client.ObjectKey) {
	if !r.owns(key.Name) {
		forgetAppSeries(key.Namespace, key.Name)
	}
}
