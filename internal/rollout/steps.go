package rollout

import (
	"time"

	"github.com/skiffcd/skiff/api/v1alpha1"
)

// CanaryStart is where a canary pass starts from.
type CanaryStart struct {
	// IsStable says the new revision is the stable one: the update is
	// done, or an undo brought the stable template back.
	IsStable bool
	// Aborted says the update is aborted: the canary goes back to the
	// stable revision.
	Aborted bool
	// StepIndex, when not nil, is the step the pass moves to before
	// anything else, the pauses ending with the step they held: the first
	// after an abort, past the last on promote --full.
	StepIndex *int32
	// Weight is the canary weight the current step asks for: none while
	// the stable Service selects the new pods (or will, on the first
	// revision).
	Weight int32
}

// StartCanary decides where a canary pass over steps starts, from the
// status read (st) and the new revision's hash.
func StartCanary(steps []v1alpha1.CanaryStep, st *v1alpha1.RolloutStatus, hash string) CanaryStart {
	stepCount := int32(len(steps))
	out := CanaryStart{IsStable: st.StableRS == hash}
	out.Aborted = st.Abort && !out.IsStable
	switch {
	case stepCount == 0:
	case out.Aborted:
		out.StepIndex = new(int32)
	case st.PromoteFull:
		out.StepIndex = &stepCount
	}
	index := st.CurrentStepIndex
	if out.StepIndex != nil {
		index = out.StepIndex
	}
	if !out.IsStable && st.StableRS != "" {
		out.Weight = DesiredWeight(steps, index, out.Aborted)
	}
	return out
}

// CanaryProgressInput is what decides a canary pass's way through its
// steps, once the pass has sized the ReplicaSets.
type CanaryProgressInput struct {
	Start CanaryStart
	// Status is the status as the pass has it so far (read only): the
	// step index, the pauses, the stable revision, the router's weights.
	Status *v1alpha1.RolloutStatus
	Hash   string // the new revision's pod template hash
	Paused bool   // spec.paused
	// Replicas is what the replica math decided on (CanaryReplicas) and
	// WantCanary and WantStable its answer; Canary and Stable are the two
	// ReplicaSets as this pass scaled them (Stable nil when there is none,
	// or the new revision is stable).
	Replicas               CanaryInput
	WantCanary, WantStable int32
	Canary, Stable         *ReplicaSetCounts
	// StepAnalysisSucceeded says the current step's analysis passed.
	StepAnalysisSucceeded bool
	Now                   time.Time
}

// CanaryProgress is what a canary pass does once it has sized the
// ReplicaSets, in this order: the router's weight, the step, the stable
// revision, the canary Service.
type CanaryProgress struct {
	// RoutedWeight is the weight the traffic routers send to the canary.
	RoutedWeight int32
	// Pause is PauseAdded when a pause step begins (CanaryPauseStep).
	Pause PauseChange
	// StepCompleted says the current step is done: its pause ends,
	// status.controllerPause clears, and the next step begins.
	StepCompleted bool
	// MarkStable makes the new revision the stable one; the pauses end.
	MarkStable bool
	// CanaryServiceTarget is the revision the canary Service selects.
	CanaryServiceTarget string
	// Requeue asks for a pass RequeueAfter from now (0: at once).
	Requeue      bool
	RequeueAfter time.Duration
}

// requeueAfter asks for a pass within d.
func (p *CanaryProgress) requeueAfter(d time.Duration) {
	if !p.Requeue || d < p.RequeueAfter {
		p.Requeue, p.RequeueAfter = true, d
	}
}

// PlanCanaryProgress decides how a canary pass moves through its steps.
// Traffic moves to the canary only once its pods are available to take it;
// it moves back at once, or after an abort with dynamicStableScale as fast
// as stable pods become available to take it (AbortTrafficWeight). The
// current step completes when it is done (runStep), one step per pass,
// unless the update is aborted, the rollout paused (spec.paused), or an
// Inconclusive analysis holds the canary where it is until a promote. Once
// the steps are done and the canary runs spec.replicas pods, all
// available, the new revision becomes stable (the old stable goes down on
// the next pass). After an abort the canary Service goes back to the
// stable pods too, so nothing that reaches it lands on a revision scaled to
// zero; with dynamicStableScale only once the router sends it nothing, as
// the stable pods are not yet there to take its traffic.
func PlanCanaryProgress(in CanaryProgressInput) CanaryProgress {
	st, start, sized := in.Status, in.Start, in.Replicas
	out := CanaryProgress{RoutedWeight: start.Weight, CanaryServiceTarget: in.Hash}
	switch {
	case start.Aborted:
		out.RoutedWeight = AbortTrafficWeight(sized)
	case sized.TrafficRouted && in.Canary.AvailableReplicas < in.WantCanary:
		current := int32(0)
		if w := st.Canary.Weights; w != nil {
			current = w.Canary.Weight
		}
		out.RoutedWeight = min(start.Weight, current)
	}

	updating := !start.Aborted && !start.IsStable && FindPause(st, v1alpha1.PauseReasonInconclusiveAnalysis) == nil
	index := st.CurrentStepIndex
	if updating && !in.Paused {
		scaled := sized
		scaled.Canary, scaled.Stable = in.Canary, in.Stable
		if runStep(in, &out, out.RoutedWeight == start.Weight && AtDesiredCounts(scaled, in.WantCanary, in.WantStable)) {
			next := *index + 1
			index = &next
		}
	}
	if updating && (index == nil || *index >= int32(len(sized.Steps))) && Saturated(in.Canary, sized.Replicas) {
		out.MarkStable = true
		out.requeueAfter(0)
	}
	if start.Aborted && st.StableRS != "" && (!sized.DynamicStableScale || out.RoutedWeight == 0) {
		out.CanaryServiceTarget = st.StableRS
	}
	return out
}

// runStep decides whether the current step completes in this pass: a
// setWeight or setCanaryScale once the ReplicaSets are at their target
// (atTarget), a pause when its duration has passed or it was promoted
// (pauseStepDone), an analysis step when its run succeeded.
func runStep(in CanaryProgressInput, out *CanaryProgress, atTarget bool) bool {
	steps, index := in.Replicas.Steps, in.Status.CurrentStepIndex
	if index == nil || *index >= int32(len(steps)) {
		return false
	}
	var done bool
	switch step := steps[*index]; {
	case step.Pause != nil:
		done = pauseStepDone(in, out, step.Pause)
	case step.SetWeight != nil, step.SetCanaryScale != nil:
		done = atTarget
	case step.Analysis != nil:
		done = in.StepAnalysisSucceeded
	default:
		done = true
	}
	if done {
		out.StepCompleted = true
		out.requeueAfter(0)
	}
	return done
}

// pauseStepDone decides a pause step: it begins with a CanaryPauseStep
// condition and ends when its duration has passed since, or when a
// promote cleared the condition; one without a duration waits for the
// promote.
func pauseStepDone(in CanaryProgressInput, out *CanaryProgress, pause *v1alpha1.RolloutPause) bool {
	st := in.Status
	cond := FindPause(st, v1alpha1.PauseReasonCanaryPauseStep)
	if cond == nil && st.ControllerPause {
		return true // promoted
	}
	d, indefinite, _ := PauseDuration(pause) // validated before
	switch {
	case cond == nil:
		out.Pause = PauseAdded
		if !indefinite {
			out.requeueAfter(d)
		}
		return false
	case indefinite:
		return false
	}
	if wait := cond.StartTime.Add(d).Sub(in.Now); wait > 0 {
		out.requeueAfter(wait)
		return false
	}
	return true
}
