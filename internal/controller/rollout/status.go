package rollout

import (
	"fmt"

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

// updateProgressing sets the Progressing condition as
// rollout.PlanProgressing decides.
func (p *pass) updateProgressing(complete, paused bool) {
	st := p.status
	now := p.metaNow()
	name := ""
	if p.newRS != nil {
		name = p.newRS.Name
	}
	progress := rollout.PlanProgressing(rollout.ProgressInput{
		Previous: rollout.GetCondition(&p.ro.Status, v1alpha1.RolloutProgressing),
		Aborted:  st.Abort, Complete: complete, Paused: paused,
		NewReplicaSet: name, Created: p.created,
		MadeProgress:    rollout.MadeProgress(&p.ro.Status, st),
		AnalysisRunning: p.gate.running,
		Revision:        p.revision,
		AbortMessage:    p.gate.abortMessage,
		DeadlineSeconds: ptr.Deref(p.ro.Spec.ProgressDeadlineSeconds, defaultProgressDeadlineSeconds),
		AbortOnDeadline: p.ro.Spec.ProgressDeadlineAbort && st.StableRS != "" && st.StableRS != p.hash,
		Now:             p.now,
	})
	switch progress.Update {
	case rollout.ProgressSet:
		rollout.SetCondition(st, v1alpha1.RolloutProgressing, progress.Status, progress.Reason, progress.Message, now)
	case rollout.ProgressMade:
		// Progress always moves lastUpdateTime, so remove before setting.
		var transition *metav1.Time
		if cur := rollout.GetCondition(st, v1alpha1.RolloutProgressing); cur != nil && cur.Status == corev1.ConditionTrue {
			transition = ptr.To(cur.LastTransitionTime)
		}
		rollout.RemoveCondition(st, v1alpha1.RolloutProgressing)
		rollout.SetCondition(st, v1alpha1.RolloutProgressing, corev1.ConditionTrue, progress.Reason, progress.Message, now)
		if transition != nil {
			rollout.GetCondition(st, v1alpha1.RolloutProgressing).LastTransitionTime = *transition
		}
	}
	if progress.DeadlineExceeded {
		p.eventOfType(corev1.EventTypeWarning, string(rollout.ReasonProgressDeadlineExceeds), "%s", progress.Message)
	}
	if progress.Abort {
		st.Abort = true
	}
	if progress.Requeue {
		p.requeueAfter(progress.RequeueAfter)
	}
}
