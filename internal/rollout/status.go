package rollout

import (
	"slices"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/skiffcd/skiff/api/v1alpha1"
)

// ConditionReason is the reason of a Rollout condition, as Argo Rollouts
// writes it.
type ConditionReason string

// Condition reasons, with the spelling of Argo Rollouts (utils/conditions).
const (
	ReasonAvailable               ConditionReason = "AvailableReason"
	ReasonNewReplicaSetCreated    ConditionReason = "NewReplicaSetCreated"
	ReasonReplicaSetUpdated       ConditionReason = "ReplicaSetUpdated"
	ReasonNewReplicaSetAvailable  ConditionReason = "NewReplicaSetAvailable"
	ReasonProgressDeadlineExceeds ConditionReason = "ProgressDeadlineExceeded"
	ReasonRolloutAborted          ConditionReason = "RolloutAborted"
	ReasonRolloutPaused           ConditionReason = "RolloutPaused"
	ReasonRolloutResumed          ConditionReason = "RolloutResumed"
	ReasonRolloutHealthy          ConditionReason = "RolloutHealthy"
	ReasonRolloutCompleted        ConditionReason = "RolloutCompleted"
	ReasonInvalidSpec             ConditionReason = "InvalidSpec"
	ReasonUnsupportedField        ConditionReason = "UnsupportedField"
)

// Phase returns the phase and message Argo Rollouts shows for ro, from its
// spec and the status about to be written. The order of the checks is Argo
// Rollouts': a spec not yet observed, then terminal conditions (invalid spec,
// abort, progress deadline), then pauses, then the replica counts, then the
// strategy-specific cutover.
func Phase(ro *v1alpha1.Rollout) (v1alpha1.RolloutPhase, string) {
	status := &ro.Status
	if status.ObservedGeneration != strconv.FormatInt(ro.Generation, 10) {
		return v1alpha1.RolloutPhaseProgressing, "waiting for rollout spec update to be observed"
	}
	for _, c := range status.Conditions {
		if c.Type == v1alpha1.InvalidSpec && c.Status == corev1.ConditionTrue {
			return v1alpha1.RolloutPhaseDegraded, string(v1alpha1.InvalidSpec) + ": " + c.Message
		}
	}
	for _, c := range status.Conditions {
		switch ConditionReason(c.Reason) {
		case ReasonRolloutAborted, ReasonProgressDeadlineExceeds:
			return v1alpha1.RolloutPhaseDegraded, c.Reason + ": " + c.Message
		}
	}
	if ro.Spec.Paused {
		return v1alpha1.RolloutPhasePaused, "manually paused"
	}
	if len(status.PauseConditions) > 0 {
		return v1alpha1.RolloutPhasePaused, string(status.PauseConditions[0].Reason)
	}
	if status.UpdatedReplicas < Replicas(ro) {
		return v1alpha1.RolloutPhaseProgressing, "more replicas need to be updated"
	}
	if status.AvailableReplicas < status.UpdatedReplicas {
		return v1alpha1.RolloutPhaseProgressing, "updated replicas are still becoming available"
	}
	switch {
	case ro.Spec.Strategy.BlueGreen != nil:
		if status.BlueGreen.ActiveSelector == "" || status.BlueGreen.ActiveSelector != status.CurrentPodHash {
			return v1alpha1.RolloutPhaseProgressing, "active service cutover pending"
		}
		if status.StableRS == "" || status.StableRS != status.CurrentPodHash {
			return v1alpha1.RolloutPhaseProgressing, "waiting for analysis to complete"
		}
	case ro.Spec.Strategy.Canary != nil:
		// A traffic-routed canary may keep the old pods up for its scale-down
		// delay, so only the basic canary waits for them to go.
		if ro.Spec.Strategy.Canary.TrafficRouting == nil && status.Replicas > status.UpdatedReplicas {
			return v1alpha1.RolloutPhaseProgressing, "old replicas are pending termination"
		}
		if status.StableRS == "" || status.StableRS != status.CurrentPodHash {
			return v1alpha1.RolloutPhaseProgressing, "waiting for all steps to complete"
		}
	}
	return v1alpha1.RolloutPhaseHealthy, ""
}

// Replicas is spec.replicas with its default of 1.
func Replicas(ro *v1alpha1.Rollout) int32 {
	if ro.Spec.Replicas == nil {
		return 1
	}
	return *ro.Spec.Replicas
}

// GetCondition returns the condition of type t, or nil.
func GetCondition(status *v1alpha1.RolloutStatus, t v1alpha1.RolloutConditionType) *v1alpha1.RolloutCondition {
	for i := range status.Conditions {
		if status.Conditions[i].Type == t {
			return &status.Conditions[i]
		}
	}
	return nil
}

// SetCondition records a condition of type t at now. An identical condition
// (status, reason and message) is left untouched, so repeated passes do not
// churn the status; a change of reason or message keeps the transition time
// while the status stays the same.
func SetCondition(status *v1alpha1.RolloutStatus, t v1alpha1.RolloutConditionType, s corev1.ConditionStatus, reason ConditionReason, message string, now metav1.Time) {
	cond := v1alpha1.RolloutCondition{Type: t, Status: s, Reason: string(reason), Message: message, LastUpdateTime: now, LastTransitionTime: now}
	existing := GetCondition(status, t)
	if existing == nil {
		status.Conditions = append(status.Conditions, cond)
		return
	}
	if existing.Status == s && existing.Reason == string(reason) && existing.Message == message {
		return
	}
	if existing.Status == s {
		cond.LastTransitionTime = existing.LastTransitionTime
	}
	*existing = cond
}

// RemoveCondition drops the condition of type t.
func RemoveCondition(status *v1alpha1.RolloutStatus, t v1alpha1.RolloutConditionType) {
	status.Conditions = slices.DeleteFunc(status.Conditions, func(c v1alpha1.RolloutCondition) bool { return c.Type == t })
}
