package rollout

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/skiffcd/skiff/api/v1alpha1"
)

func TestPhase(t *testing.T) {
	blueGreen := v1alpha1.RolloutStrategy{BlueGreen: &v1alpha1.BlueGreenStrategy{ActiveService: "active"}}
	canary := v1alpha1.RolloutStrategy{Canary: &v1alpha1.CanaryStrategy{}}
	routed := v1alpha1.RolloutStrategy{Canary: &v1alpha1.CanaryStrategy{TrafficRouting: &v1alpha1.RolloutTrafficRouting{}}}
	healthy := v1alpha1.RolloutStatus{
		ObservedGeneration: "3", CurrentPodHash: "abc", StableRS: "abc",
		Replicas: 2, UpdatedReplicas: 2, AvailableReplicas: 2,
		BlueGreen: v1alpha1.BlueGreenStatus{ActiveSelector: "abc"},
	}
	with := func(edit func(*v1alpha1.RolloutStatus)) v1alpha1.RolloutStatus {
		s := *healthy.DeepCopy()
		edit(&s)
		return s
	}
	condition := func(t v1alpha1.RolloutConditionType, reason ConditionReason, msg string) v1alpha1.RolloutCondition {
		return v1alpha1.RolloutCondition{Type: t, Status: corev1.ConditionTrue, Reason: string(reason), Message: msg}
	}
	tests := map[string]struct {
		strategy    v1alpha1.RolloutStrategy
		paused      bool
		status      v1alpha1.RolloutStatus
		wantPhase   v1alpha1.RolloutPhase
		wantMessage string
	}{
		"a finished blue-green rollout is healthy": {
			strategy: blueGreen, status: healthy, wantPhase: v1alpha1.RolloutPhaseHealthy,
		},
		"a finished canary is healthy": {
			strategy: canary, status: healthy, wantPhase: v1alpha1.RolloutPhaseHealthy,
		},
		"a spec change not yet observed is progressing": {
			strategy: canary, status: with(func(s *v1alpha1.RolloutStatus) { s.ObservedGeneration = "2" }),
			wantPhase: v1alpha1.RolloutPhaseProgressing, wantMessage: "waiting for rollout spec update to be observed",
		},
		"an invalid spec is degraded with its message": {
			strategy: blueGreen, status: with(func(s *v1alpha1.RolloutStatus) {
				s.Conditions = []v1alpha1.RolloutCondition{condition(v1alpha1.InvalidSpec, ReasonInvalidSpec, "service \"x\" not found")}
			}),
			wantPhase: v1alpha1.RolloutPhaseDegraded, wantMessage: `InvalidSpec: service "x" not found`,
		},
		"an aborted rollout is degraded even while paused": {
			strategy: canary, paused: true, status: with(func(s *v1alpha1.RolloutStatus) {
				s.Conditions = []v1alpha1.RolloutCondition{condition(v1alpha1.RolloutProgressing, ReasonRolloutAborted, "Rollout aborted update to revision 2")}
			}),
			wantPhase: v1alpha1.RolloutPhaseDegraded, wantMessage: "RolloutAborted: Rollout aborted update to revision 2",
		},
		"a passed progress deadline is degraded": {
			strategy: canary, status: with(func(s *v1alpha1.RolloutStatus) {
				s.Conditions = []v1alpha1.RolloutCondition{condition(v1alpha1.RolloutProgressing, ReasonProgressDeadlineExceeds, `ReplicaSet "r-1" has timed out progressing.`)}
			}),
			wantPhase: v1alpha1.RolloutPhaseDegraded, wantMessage: `ProgressDeadlineExceeded: ReplicaSet "r-1" has timed out progressing.`,
		},
		"spec.paused is a manual pause": {
			strategy: canary, paused: true, status: healthy,
			wantPhase: v1alpha1.RolloutPhasePaused, wantMessage: "manually paused",
		},
		"a pause condition names its reason": {
			strategy: canary, status: with(func(s *v1alpha1.RolloutStatus) {
				s.PauseConditions = []v1alpha1.PauseCondition{{Reason: v1alpha1.PauseReasonCanaryPauseStep}}
			}),
			wantPhase: v1alpha1.RolloutPhasePaused, wantMessage: "CanaryPauseStep",
		},
		"too few updated replicas is progressing": {
			strategy: canary, status: with(func(s *v1alpha1.RolloutStatus) { s.UpdatedReplicas = 1 }),
			wantPhase: v1alpha1.RolloutPhaseProgressing, wantMessage: "more replicas need to be updated",
		},
		"updated replicas not yet available is progressing": {
			strategy: canary, status: with(func(s *v1alpha1.RolloutStatus) { s.AvailableReplicas = 1 }),
			wantPhase: v1alpha1.RolloutPhaseProgressing, wantMessage: "updated replicas are still becoming available",
		},
		"blue-green before the active switch is progressing": {
			strategy: blueGreen, status: with(func(s *v1alpha1.RolloutStatus) { s.BlueGreen.ActiveSelector = "old" }),
			wantPhase: v1alpha1.RolloutPhaseProgressing, wantMessage: "active service cutover pending",
		},
		"blue-green switched but not yet stable is progressing": {
			strategy: blueGreen, status: with(func(s *v1alpha1.RolloutStatus) { s.StableRS = "old" }),
			wantPhase: v1alpha1.RolloutPhaseProgressing, wantMessage: "waiting for analysis to complete",
		},
		"blue-green keeps old pods during the scale-down delay and is healthy": {
			strategy: blueGreen, status: with(func(s *v1alpha1.RolloutStatus) { s.Replicas = 4 }),
			wantPhase: v1alpha1.RolloutPhaseHealthy,
		},
		"a basic canary with old pods left is progressing": {
			strategy: canary, status: with(func(s *v1alpha1.RolloutStatus) { s.Replicas = 3 }),
			wantPhase: v1alpha1.RolloutPhaseProgressing, wantMessage: "old replicas are pending termination",
		},
		"a traffic-routed canary with old pods left is healthy": {
			strategy: routed, status: with(func(s *v1alpha1.RolloutStatus) { s.Replicas = 3 }),
			wantPhase: v1alpha1.RolloutPhaseHealthy,
		},
		"a canary whose steps are not done is progressing": {
			strategy: canary, status: with(func(s *v1alpha1.RolloutStatus) { s.StableRS = "old" }),
			wantPhase: v1alpha1.RolloutPhaseProgressing, wantMessage: "waiting for all steps to complete",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			ro := &v1alpha1.Rollout{
				ObjectMeta: metav1.ObjectMeta{Generation: 3},
				Spec:       v1alpha1.RolloutSpec{Replicas: ptr[int32](2), Strategy: tc.strategy, Paused: tc.paused},
				Status:     tc.status,
			}
			phase, msg := Phase(ro)
			if phase != tc.wantPhase || msg != tc.wantMessage {
				t.Errorf("Phase = %s %q, want %s %q", phase, msg, tc.wantPhase, tc.wantMessage)
			}
		})
	}
}

func TestSetCondition(t *testing.T) {
	t0 := metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	t1 := metav1.NewTime(t0.Add(time.Minute))
	start := func() *v1alpha1.RolloutStatus {
		return &v1alpha1.RolloutStatus{Conditions: []v1alpha1.RolloutCondition{{
			Type: v1alpha1.RolloutProgressing, Status: corev1.ConditionTrue, Reason: "ReplicaSetUpdated", Message: "m",
			LastUpdateTime: t0, LastTransitionTime: t0,
		}}}
	}
	tests := map[string]struct {
		status         corev1.ConditionStatus
		reason         ConditionReason
		message        string
		wantUpdate     metav1.Time
		wantTransition metav1.Time
	}{
		"an identical condition is left as it was": {
			status: corev1.ConditionTrue, reason: ReasonReplicaSetUpdated, message: "m", wantUpdate: t0, wantTransition: t0,
		},
		"a new reason with the same status keeps the transition time": {
			status: corev1.ConditionTrue, reason: ReasonNewReplicaSetAvailable, message: "done", wantUpdate: t1, wantTransition: t0,
		},
		"a new status is a transition": {
			status: corev1.ConditionFalse, reason: ReasonProgressDeadlineExceeds, message: "late", wantUpdate: t1, wantTransition: t1,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			s := start()
			SetCondition(s, v1alpha1.RolloutProgressing, tc.status, tc.reason, tc.message, t1)
			got := GetCondition(s, v1alpha1.RolloutProgressing)
			if len(s.Conditions) != 1 || got == nil {
				t.Fatalf("conditions = %+v, want one Progressing", s.Conditions)
			}
			if !got.LastUpdateTime.Equal(&tc.wantUpdate) || !got.LastTransitionTime.Equal(&tc.wantTransition) {
				t.Errorf("times update=%v transition=%v, want %v %v", got.LastUpdateTime, got.LastTransitionTime, tc.wantUpdate, tc.wantTransition)
			}
		})
	}
}

func TestReplicasDefaultsToOne(t *testing.T) {
	if got := Replicas(&v1alpha1.Rollout{}); got != 1 {
		t.Errorf("Replicas of an empty spec = %d, want 1", got)
	}
}
