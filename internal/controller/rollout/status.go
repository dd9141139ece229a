package rollout

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/skiffcd/skiff/api/v1alpha1"
	"github.com/skiffcd/skiff/internal/rollout"
)

// computeStatus fills the replica counts, the selector and the conditions
// of the status about to be written.
func (p *pass) computeStatus() {
	st := p.status
	st.Replicas, st.ReadyReplicas, st.AvailableReplicas = 0, 0, 0
	for _, rs := range p.allRS {
		st.Replicas += rs.Status.Replicas
		st.ReadyReplicas += rs.Status.ReadyReplicas
		st.AvailableReplicas += rs.Status.AvailableReplicas
	}
	st.UpdatedReplicas = 0
	if p.newRS != nil {
		st.UpdatedReplicas = p.newRS.Status.Replicas
	}
	st.HPAReplicas = st.Replicas
	st.Selector = metav1.FormatLabelSelector(p.ro.Spec.Selector)
	// Blue-green counts what the active Service reaches, as Argo Rollouts
	// does, so an HPA scales on the pods that take traffic.
	if p.ro.Spec.Strategy.BlueGreen != nil {
		if active := p.rsByHash(st.BlueGreen.ActiveSelector); active != nil {
			st.HPAReplicas = active.Status.Replicas
			st.Selector = metav1.FormatLabelSelector(active.Spec.Selector)
			st.AvailableReplicas = active.Status.AvailableReplicas
			st.ReadyReplicas = active.Status.ReadyReplicas
		}
	}
	p.updateConditions()
}

// updateConditions sets Progressing (with the progress deadline),
// Available, Paused, Healthy and Completed.
func (p *pass) updateConditions() {
	st := p.status
	now := p.metaNow()
	paused := p.ro.Spec.Paused || len(st.PauseConditions) > 0
	complete := p.newRS != nil && st.StableRS == p.hash &&
		st.UpdatedReplicas == p.replicas && st.AvailableReplicas >= p.replicas
	if p.ro.Spec.Strategy.BlueGreen != nil {
		complete = complete && st.BlueGreen.ActiveSelector == p.hash
	}
	p.updateProgressing(complete, paused)

	minAvailable := p.replicas
	if c := p.ro.Spec.Strategy.Canary; c != nil {
		minAvailable -= rollout.MaxUnavailableCount(c.MaxUnavailable, p.replicas)
	}
	if st.AvailableReplicas >= minAvailable {
		rollout.SetCondition(st, v1alpha1.RolloutAvailable, corev1.ConditionTrue, rollout.ReasonAvailable, "Rollout has minimum availability", now)
	} else {
		rollout.SetCondition(st, v1alpha1.RolloutAvailable, corev1.ConditionFalse, rollout.ReasonAvailable, "Rollout does not have minimum availability", now)
	}

	switch {
	case paused:
		rollout.SetCondition(st, v1alpha1.RolloutPaused, corev1.ConditionTrue, rollout.ReasonRolloutPaused, "Rollout is paused", now)
	case rollout.GetCondition(st, v1alpha1.RolloutPaused) != nil:
		rollout.SetCondition(st, v1alpha1.RolloutPaused, corev1.ConditionFalse, rollout.ReasonRolloutResumed, "Rollout is resumed", now)
	}

	wasComplete := rollout.GetCondition(&p.ro.Status, v1alpha1.RolloutCompleted)
	if complete {
		rollout.SetCondition(st, v1alpha1.RolloutCompleted, corev1.ConditionTrue, rollout.ReasonRolloutCompleted, "Rollout completed update to revision "+fmt.Sprint(p.revision), now)
		if wasComplete == nil || wasComplete.Status != corev1.ConditionTrue {
			p.event("RolloutCompleted", "Rollout completed update to revision %d (%s)", p.revision, p.hash)
		}
	} else {
		rollout.SetCondition(st, v1alpha1.RolloutCompleted, corev1.ConditionFalse, "RolloutNotCompleted",
			fmt.Sprintf("Rollout not completed, started update to revision %d (%s)", p.revision, p.hash), now)
	}
	if complete && !paused && !st.Abort && st.AvailableReplicas >= p.replicas {
		rollout.SetCondition(st, v1alpha1.RolloutHealthy, corev1.ConditionTrue, rollout.ReasonRolloutHealthy, "Rollout is healthy", now)
	} else {
		rollout.SetCondition(st, v1alpha1.RolloutHealthy, corev1.ConditionFalse, rollout.ReasonRolloutHealthy, "Rollout is not healthy", now)
	}
}

// updateProgressing sets the Progressing condition. Its lastUpdateTime moves
// whenever the rollout makes progress; when it stands still for longer than
// progressDeadlineSeconds the rollout is Degraded (ProgressDeadlineExceeded)
// and, with progressDeadlineAbort, aborted.
func (p *pass) updateProgressing(complete, paused bool) {
	st := p.status
	now := p.metaNow()
	name := ""
	if p.newRS != nil {
		name = p.newRS.Name
	}
	old := rollout.GetCondition(&p.ro.Status, v1alpha1.RolloutProgressing)
	progressing := func(reason rollout.ConditionReason, msg string) {
		// Progress always moves lastUpdateTime, so remove before setting.
		var transition *metav1.Time
		if cur := rollout.GetCondition(st, v1alpha1.RolloutProgressing); cur != nil && cur.Status == corev1.ConditionTrue {
			transition = ptr.To(cur.LastTransitionTime)
		}
		rollout.RemoveCondition(st, v1alpha1.RolloutProgressing)
		rollout.SetCondition(st, v1alpha1.RolloutProgressing, corev1.ConditionTrue, reason, msg, now)
		if transition != nil {
			rollout.GetCondition(st, v1alpha1.RolloutProgressing).LastTransitionTime = *transition
		}
	}
	switch {
	case st.Abort:
		// The run that aborted the update is named once, in the pass that
		// aborts; later passes keep the message.
		msg := fmt.Sprintf("Rollout aborted update to revision %d", p.revision)
		if p.gate.abortMessage != "" {
			msg += ": " + p.gate.abortMessage
		} else if old != nil && rollout.ConditionReason(old.Reason) == rollout.ReasonRolloutAborted {
			msg = old.Message
		}
		rollout.SetCondition(st, v1alpha1.RolloutProgressing, corev1.ConditionFalse, rollout.ReasonRolloutAborted, msg, now)
	case complete:
		rollout.SetCondition(st, v1alpha1.RolloutProgressing, corev1.ConditionTrue, rollout.ReasonNewReplicaSetAvailable,
			fmt.Sprintf("ReplicaSet %q has successfully progressed.", name), now)
	case paused:
		rollout.SetCondition(st, v1alpha1.RolloutProgressing, corev1.ConditionUnknown, rollout.ReasonRolloutPaused, "Rollout is paused", now)
	case p.created:
		progressing(rollout.ReasonNewReplicaSetCreated, fmt.Sprintf("Created new replica set %q", name))
	case p.newRS == nil:
	case old == nil || p.madeProgress() || !countsTowardsDeadline(old):
		progressing(rollout.ReasonReplicaSetUpdated, fmt.Sprintf("ReplicaSet %q is progressing.", name))
	default:
		if rollout.ConditionReason(old.Reason) == rollout.ReasonProgressDeadlineExceeds || p.gate.running {
			return // already timed out, or waiting on an analysis, which has no deadline
		}
		seconds := ptr.Deref(p.ro.Spec.ProgressDeadlineSeconds, defaultProgressDeadlineSeconds)
		deadline := old.LastUpdateTime.Add(secondsDuration(seconds))
		if wait := deadline.Sub(p.now); wait > 0 {
			p.requeueAfter(wait)
			return
		}
		msg := fmt.Sprintf("ReplicaSet %q has timed out progressing.", name)
		rollout.SetCondition(st, v1alpha1.RolloutProgressing, corev1.ConditionFalse, rollout.ReasonProgressDeadlineExceeds, msg, now)
		p.eventOfType(corev1.EventTypeWarning, string(rollout.ReasonProgressDeadlineExceeds), "%s", msg)
		if p.ro.Spec.ProgressDeadlineAbort && st.StableRS != "" && st.StableRS != p.hash {
			st.Abort = true
			p.requeueAfter(0) // the abort itself happens on the next pass
		}
	}
}

// countsTowardsDeadline says whether a Progressing condition's
// lastUpdateTime is the start of the wait for progress: not when it records
// a finished, paused or aborted rollout, which a new wait starts from now.
func countsTowardsDeadline(c *v1alpha1.RolloutCondition) bool {
	switch rollout.ConditionReason(c.Reason) {
	case rollout.ReasonReplicaSetUpdated, rollout.ReasonNewReplicaSetCreated, rollout.ReasonRolloutResumed, rollout.ReasonProgressDeadlineExceeds:
		return true
	}
	return false
}

// madeProgress says whether this pass moved the rollout: replica counts,
// the step, the active selector or the stable revision changed.
func (p *pass) madeProgress() bool {
	before, after := &p.ro.Status, p.status
	return before.Replicas != after.Replicas ||
		before.UpdatedReplicas != after.UpdatedReplicas ||
		before.ReadyReplicas != after.ReadyReplicas ||
		before.AvailableReplicas != after.AvailableReplicas ||
		ptr.Deref(before.CurrentStepIndex, -1) != ptr.Deref(after.CurrentStepIndex, -1) ||
		before.CurrentPodHash != after.CurrentPodHash ||
		before.StableRS != after.StableRS ||
		before.BlueGreen.ActiveSelector != after.BlueGreen.ActiveSelector
}

func secondsDuration(s int32) time.Duration { return time.Duration(s) * time.Second }
