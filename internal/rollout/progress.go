package rollout

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/skiffcd/skiff/api/v1alpha1"
)

// ProgressInput is what decides a Rollout's Progressing condition in a pass.
type ProgressInput struct {
	// Previous is the Progressing condition as the pass read it; nil for none.
	Previous *v1alpha1.RolloutCondition
	// Aborted, Complete and Paused are the update's state after the pass.
	Aborted, Complete, Paused bool
	// NewReplicaSet names the new revision's ReplicaSet ("" while there is
	// none); Created says this pass created it.
	NewReplicaSet string
	Created       bool
	// MadeProgress says the pass moved the rollout (MadeProgress).
	MadeProgress bool
	// AnalysisRunning says a run the update waits on has not finished.
	AnalysisRunning bool
	Revision        int64 // the new revision's number
	// AbortMessage says which run aborted the update in this pass.
	AbortMessage string
	// DeadlineSeconds is progressDeadlineSeconds, default applied;
	// AbortOnDeadline says progressDeadlineAbort is set and a stable
	// revision is there to go back to.
	DeadlineSeconds int32
	AbortOnDeadline bool
	Now             time.Time
}

// ProgressUpdate is what a pass does to the Progressing condition.
type ProgressUpdate int

const (
	// ProgressKept leaves the condition as it is.
	ProgressKept ProgressUpdate = iota
	// ProgressSet sets the condition's status, reason and message.
	ProgressSet
	// ProgressMade records progress: True, with lastUpdateTime now and
	// lastTransitionTime kept while it stays True.
	ProgressMade
)

// Progress is a pass's decision on the Progressing condition.
type Progress struct {
	Update  ProgressUpdate
	Status  corev1.ConditionStatus // for ProgressSet
	Reason  ConditionReason
	Message string
	// DeadlineExceeded says the rollout stood still past its deadline in
	// this pass: a Warning event says Message.
	DeadlineExceeded bool
	// Abort aborts the update; the abort itself happens on the next pass.
	Abort bool
	// Requeue asks for a pass RequeueAfter from now (0: at once).
	Requeue      bool
	RequeueAfter time.Duration
}

// PlanProgressing decides the Progressing condition. Its lastUpdateTime
// moves whenever the rollout makes progress; when it stands still for
// longer than progressDeadlineSeconds the rollout is Degraded
// (ProgressDeadlineExceeded) and, with progressDeadlineAbort, aborted. A
// finished, paused or aborted rollout starts a new wait from now, and an
// analysis has no deadline, as in Argo Rollouts.
func PlanProgressing(in ProgressInput) Progress {
	old, name := in.Previous, in.NewReplicaSet
	switch {
	case in.Aborted:
		// The run that aborted the update is named once, in the pass that
		// aborts; later passes keep the message.
		msg := fmt.Sprintf("Rollout aborted update to revision %d", in.Revision)
		if in.AbortMessage != "" {
			msg += ": " + in.AbortMessage
		} else if old != nil && ConditionReason(old.Reason) == ReasonRolloutAborted {
			msg = old.Message
		}
		return Progress{Update: ProgressSet, Status: corev1.ConditionFalse, Reason: ReasonRolloutAborted, Message: msg}
	case in.Complete:
		return Progress{Update: ProgressSet, Status: corev1.ConditionTrue, Reason: ReasonNewReplicaSetAvailable,
			Message: fmt.Sprintf("ReplicaSet %q has successfully progressed.", name)}
	case in.Paused:
		return Progress{Update: ProgressSet, Status: corev1.ConditionUnknown, Reason: ReasonRolloutPaused, Message: "Rollout is paused"}
	case in.Created:
		return Progress{Update: ProgressMade, Reason: ReasonNewReplicaSetCreated, Message: fmt.Sprintf("Created new replica set %q", name)}
	case name == "":
		return Progress{}
	case old == nil || in.MadeProgress || !countsTowardsDeadline(old):
		return Progress{Update: ProgressMade, Reason: ReasonReplicaSetUpdated, Message: fmt.Sprintf("ReplicaSet %q is progressing.", name)}
	case ConditionReason(old.Reason) == ReasonProgressDeadlineExceeds || in.AnalysisRunning:
		return Progress{} // already timed out, or waiting on an analysis, which has no deadline
	}
	deadline := old.LastUpdateTime.Add(time.Duration(in.DeadlineSeconds) * time.Second)
	if wait := deadline.Sub(in.Now); wait > 0 {
		return Progress{Requeue: true, RequeueAfter: wait}
	}
	out := Progress{
		Update: ProgressSet, Status: corev1.ConditionFalse, Reason: ReasonProgressDeadlineExceeds,
		Message: fmt.Sprintf("ReplicaSet %q has timed out progressing.", name), DeadlineExceeded: true,
	}
	if in.AbortOnDeadline {
		out.Abort, out.Requeue = true, true
	}
	return out
}

// countsTowardsDeadline says whether a Progressing condition's
// lastUpdateTime is the start of the wait for progress: not when it records
// a finished, paused or aborted rollout, which a new wait starts from now.
func countsTowardsDeadline(c *v1alpha1.RolloutCondition) bool {
	switch ConditionReason(c.Reason) {
	case ReasonReplicaSetUpdated, ReasonNewReplicaSetCreated, ReasonRolloutResumed, ReasonProgressDeadlineExceeds:
		return true
	}
	return false
}

// MadeProgress says whether a pass moved the rollout from status before to
// status after: replica counts, the step, the pod template, the active
// selector or the stable revision changed.
func MadeProgress(before, after *v1alpha1.RolloutStatus) bool {
	return before.Replicas != after.Replicas ||
		before.UpdatedReplicas != after.UpdatedReplicas ||
		before.ReadyReplicas != after.ReadyReplicas ||
		before.AvailableReplicas != after.AvailableReplicas ||
		stepIndexOf(before) != stepIndexOf(after) ||
		before.CurrentPodHash != after.CurrentPodHash ||
		before.StableRS != after.StableRS ||
		before.BlueGreen.ActiveSelector != after.BlueGreen.ActiveSelector
}

func stepIndexOf(st *v1alpha1.RolloutStatus) int32 {
	if st.CurrentStepIndex == nil {
		return -1
	}
	return *st.CurrentStepIndex
}
