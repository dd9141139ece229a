package rollout

import "time"

// WithinRollbackWindow says whether going back to the ReplicaSet created
// at target, from the stable one created at stable, is a rollback Argo
// Rollouts fast-tracks: target is older than stable and fewer than
// revisions of the others were created between them.
func WithinRollbackWindow(target, stable time.Time, others []time.Time, revisions int32) bool {
	if revisions <= 0 || !target.Before(stable) {
		return false
	}
	var between int32
	for _, t := range others {
		if t.After(target) && t.Before(stable) {
			between++
		}
	}
	return between < revisions
}
