package rollout

import "time"

// DelayedScaleDown is what a pass does to a ReplicaSet that goes to 0 a
// delay after it was first asked to, the deadline kept in its
// scale-down-deadline annotation, as Argo Rollouts does, so it survives
// restarts.
type DelayedScaleDown struct {
	// Deadline, when not zero, is the deadline to write in the annotation:
	// the ReplicaSet had none that parses.
	Deadline time.Time
	// Wait, when above 0, is how long the ReplicaSet stays up yet.
	Wait time.Duration
	// ScaleDown scales the ReplicaSet to 0 now.
	ScaleDown bool
	// ClearDeadline removes the annotation: the ReplicaSet is down.
	ClearDeadline bool
}

// ScaleDownAfter decides, at now, on a ReplicaSet of replicas pods
// (spec.replicas) whose scale-down-deadline annotation is deadline ("" for
// none) and that goes to 0 delay after the first pass that asks.
func ScaleDownAfter(replicas int32, deadline string, delay time.Duration, now time.Time) DelayedScaleDown {
	if replicas == 0 {
		return DelayedScaleDown{ClearDeadline: true}
	}
	var out DelayedScaleDown
	at, err := time.Parse(time.RFC3339, deadline)
	if err != nil {
		at = now.Add(delay)
		out.Deadline = at
	}
	if wait := at.Sub(now); wait > 0 {
		out.Wait = wait
		return out
	}
	out.ScaleDown, out.ClearDeadline = true, true
	return out
}
