package rollout

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/skiffcd/skiff/api/v1alpha1"
)

func setWeight(w int32) v1alpha1.CanaryStep { return v1alpha1.CanaryStep{SetWeight: &w} }

func pauseFor(d string) v1alpha1.CanaryStep {
	if d == "" {
		return v1alpha1.CanaryStep{Pause: &v1alpha1.RolloutPause{}}
	}
	duration := intstr.FromString(d)
	return v1alpha1.CanaryStep{Pause: &v1alpha1.RolloutPause{Duration: &duration}}
}

func TestStartCanary(t *testing.T) {
	steps := []v1alpha1.CanaryStep{setWeight(20), pauseFor(""), setWeight(50)}
	tests := map[string]struct {
		steps  []v1alpha1.CanaryStep
		status v1alpha1.RolloutStatus
		want   CanaryStart
	}{
		"an update under way keeps its step and asks for the weight of its last setWeight": {
			steps: steps, status: v1alpha1.RolloutStatus{StableRS: "old", CurrentStepIndex: ptr[int32](1)},
			want: CanaryStart{Weight: 20},
		},
		"the first revision asks for no canary weight: the stable Service will select it": {
			steps: steps, status: v1alpha1.RolloutStatus{CurrentStepIndex: ptr[int32](3)},
			want: CanaryStart{},
		},
		"a new revision that is the stable one asks for no canary weight": {
			steps: steps, status: v1alpha1.RolloutStatus{StableRS: "new", CurrentStepIndex: ptr[int32](3)},
			want: CanaryStart{IsStable: true},
		},
		"an abort goes back to the first step with no weight": {
			steps: steps, status: v1alpha1.RolloutStatus{StableRS: "old", CurrentStepIndex: ptr[int32](2), Abort: true},
			want: CanaryStart{Aborted: true, StepIndex: ptr[int32](0)},
		},
		"an abort of the stable revision aborts nothing": {
			steps: steps, status: v1alpha1.RolloutStatus{StableRS: "new", CurrentStepIndex: ptr[int32](3), Abort: true},
			want: CanaryStart{IsStable: true},
		},
		"promote --full goes past the last step, at the full weight": {
			steps: steps, status: v1alpha1.RolloutStatus{StableRS: "old", CurrentStepIndex: ptr[int32](1), PromoteFull: true},
			want: CanaryStart{StepIndex: ptr[int32](3), Weight: 100},
		},
		"an abort outweighs promote --full": {
			steps: steps, status: v1alpha1.RolloutStatus{StableRS: "old", CurrentStepIndex: ptr[int32](1), PromoteFull: true, Abort: true},
			want: CanaryStart{Aborted: true, StepIndex: ptr[int32](0)},
		},
		"a canary without steps has no index to move and goes to the full weight": {
			status: v1alpha1.RolloutStatus{StableRS: "old", PromoteFull: true},
			want:   CanaryStart{Weight: 100},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got := StartCanary(tc.steps, &tc.status, "new")
			if got.IsStable != tc.want.IsStable || got.Aborted != tc.want.Aborted || got.Weight != tc.want.Weight ||
				(got.StepIndex == nil) != (tc.want.StepIndex == nil) || got.StepIndex != nil && *got.StepIndex != *tc.want.StepIndex {
				t.Errorf("StartCanary = %+v (step %v), want %+v (step %v)", got, deref(got.StepIndex), tc.want, deref(tc.want.StepIndex))
			}
		})
	}
}

func deref(p *int32) any {
	if p == nil {
		return nil
	}
	return *p
}

// A 4-replica canary of revision "new" over stable "old", at the step the
// row says, its ReplicaSets as the pass scaled them.
func TestPlanCanaryProgress(t *testing.T) {
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	paused := func(reason v1alpha1.PauseReason, ago time.Duration) v1alpha1.PauseCondition {
		return v1alpha1.PauseCondition{Reason: reason, StartTime: metav1.NewTime(now.Add(-ago))}
	}
	analysis := v1alpha1.CanaryStep{Analysis: &v1alpha1.RolloutAnalysis{Templates: []v1alpha1.AnalysisTemplateRef{{TemplateName: "t"}}}}
	routedAt := func(w int32) *v1alpha1.TrafficWeights {
		return &v1alpha1.TrafficWeights{Canary: v1alpha1.WeightDestination{Weight: w}, Stable: v1alpha1.WeightDestination{Weight: 100 - w}}
	}
	tests := map[string]struct {
		steps  []v1alpha1.CanaryStep
		index  int32
		weight int32 // what StartCanary asked for
		// the pass's other inputs, from an unaborted, unpaused canary at its target
		in   func(*CanaryProgressInput)
		want CanaryProgress
	}{
		"a setWeight step completes once the ReplicaSets are at their target": {
			steps: []v1alpha1.CanaryStep{setWeight(50), pauseFor("")}, weight: 50,
			want: CanaryProgress{RoutedWeight: 50, StepCompleted: true, CanaryServiceTarget: "new", Requeue: true},
		},
		"a setWeight step waits for the canary pods to be available": {
			steps: []v1alpha1.CanaryStep{setWeight(50), pauseFor("")}, weight: 50,
			in:   func(in *CanaryProgressInput) { in.Canary.AvailableReplicas = 1 },
			want: CanaryProgress{RoutedWeight: 50, CanaryServiceTarget: "new"},
		},
		"a routed canary gets no more traffic than it had until its pods are available": {
			steps: []v1alpha1.CanaryStep{setWeight(50), pauseFor("")}, weight: 50,
			in: func(in *CanaryProgressInput) {
				in.Replicas.TrafficRouted, in.Status.Canary.Weights, in.Canary.AvailableReplicas = true, routedAt(20), 1
			},
			want: CanaryProgress{RoutedWeight: 20, CanaryServiceTarget: "new"},
		},
		"a routed canary gets its step's weight once its pods are available, and the step completes": {
			steps: []v1alpha1.CanaryStep{setWeight(50), pauseFor("")}, weight: 50,
			in: func(in *CanaryProgressInput) {
				in.Replicas.TrafficRouted, in.Status.Canary.Weights = true, routedAt(20)
			},
			want: CanaryProgress{RoutedWeight: 50, StepCompleted: true, CanaryServiceTarget: "new", Requeue: true},
		},
		"a pause step begins with a CanaryPauseStep pause": {
			steps: []v1alpha1.CanaryStep{setWeight(50), pauseFor("")}, index: 1, weight: 50,
			want: CanaryProgress{RoutedWeight: 50, Pause: PauseAdded, CanaryServiceTarget: "new"},
		},
		"a timed pause step begins and looks again when it ends": {
			steps: []v1alpha1.CanaryStep{setWeight(50), pauseFor("10s")}, index: 1, weight: 50,
			want: CanaryProgress{RoutedWeight: 50, Pause: PauseAdded, CanaryServiceTarget: "new", Requeue: true, RequeueAfter: 10 * time.Second},
		},
		"a timed pause holds for the rest of its duration": {
			steps: []v1alpha1.CanaryStep{setWeight(50), pauseFor("10s")}, index: 1, weight: 50,
			in: func(in *CanaryProgressInput) {
				in.Status.PauseConditions = []v1alpha1.PauseCondition{paused(v1alpha1.PauseReasonCanaryPauseStep, 4*time.Second)}
			},
			want: CanaryProgress{RoutedWeight: 50, CanaryServiceTarget: "new", Requeue: true, RequeueAfter: 6 * time.Second},
		},
		"a timed pause completes once its duration has passed": {
			steps: []v1alpha1.CanaryStep{setWeight(50), pauseFor("10s")}, index: 1, weight: 50,
			in: func(in *CanaryProgressInput) {
				in.Status.PauseConditions = []v1alpha1.PauseCondition{paused(v1alpha1.PauseReasonCanaryPauseStep, 10*time.Second)}
			},
			want: CanaryProgress{RoutedWeight: 50, StepCompleted: true, CanaryServiceTarget: "new", Requeue: true},
		},
		"a pause without a duration holds until a promote": {
			steps: []v1alpha1.CanaryStep{setWeight(50), pauseFor("")}, index: 1, weight: 50,
			in: func(in *CanaryProgressInput) {
				in.Status.PauseConditions = []v1alpha1.PauseCondition{paused(v1alpha1.PauseReasonCanaryPauseStep, time.Hour)}
			},
			want: CanaryProgress{RoutedWeight: 50, CanaryServiceTarget: "new"},
		},
		"a promote, which clears the pause this controller set, completes the pause step": {
			steps: []v1alpha1.CanaryStep{setWeight(50), pauseFor("")}, index: 1, weight: 50,
			in:   func(in *CanaryProgressInput) { in.Status.ControllerPause = true },
			want: CanaryProgress{RoutedWeight: 50, StepCompleted: true, CanaryServiceTarget: "new", Requeue: true},
		},
		"an analysis step completes when its run succeeded": {
			steps: []v1alpha1.CanaryStep{setWeight(50), analysis}, index: 1, weight: 50,
			in:   func(in *CanaryProgressInput) { in.StepAnalysisSucceeded = true },
			want: CanaryProgress{RoutedWeight: 50, StepCompleted: true, CanaryServiceTarget: "new", Requeue: true},
		},
		"an analysis step waits for its run": {
			steps: []v1alpha1.CanaryStep{setWeight(50), analysis}, index: 1, weight: 50,
			want: CanaryProgress{RoutedWeight: 50, CanaryServiceTarget: "new"},
		},
		"spec.paused holds the steps": {
			steps: []v1alpha1.CanaryStep{setWeight(50), pauseFor("")}, weight: 50,
			in:   func(in *CanaryProgressInput) { in.Paused = true },
			want: CanaryProgress{RoutedWeight: 50, CanaryServiceTarget: "new"},
		},
		"an Inconclusive analysis holds the canary at a pause step past its duration": {
			steps: []v1alpha1.CanaryStep{setWeight(50), pauseFor("1s")}, index: 1, weight: 50,
			in: func(in *CanaryProgressInput) {
				in.Status.PauseConditions = []v1alpha1.PauseCondition{
					paused(v1alpha1.PauseReasonCanaryPauseStep, 2*time.Second), paused(v1alpha1.PauseReasonInconclusiveAnalysis, time.Second),
				}
			},
			want: CanaryProgress{RoutedWeight: 50, CanaryServiceTarget: "new"},
		},
		"the last step completing makes a full canary stable in the same pass": {
			steps: []v1alpha1.CanaryStep{pauseFor("")}, weight: 0,
			in: func(in *CanaryProgressInput) {
				in.Status.ControllerPause = true
				in.Canary, in.WantCanary = &ReplicaSetCounts{Replicas: 4, AvailableReplicas: 4, CreatedReplicas: 4}, 4
			},
			want: CanaryProgress{StepCompleted: true, MarkStable: true, CanaryServiceTarget: "new", Requeue: true},
		},
		"with the steps done a canary not yet full is not stable": {
			steps: []v1alpha1.CanaryStep{setWeight(50)}, index: 1, weight: 100,
			in: func(in *CanaryProgressInput) {
				in.Canary = &ReplicaSetCounts{Replicas: 4, AvailableReplicas: 3, CreatedReplicas: 4}
			},
			want: CanaryProgress{RoutedWeight: 100, CanaryServiceTarget: "new"},
		},
		"with the steps done and the canary full the new revision becomes stable": {
			steps: []v1alpha1.CanaryStep{setWeight(50)}, index: 1, weight: 100,
			in: func(in *CanaryProgressInput) {
				in.Canary = &ReplicaSetCounts{Replicas: 4, AvailableReplicas: 4, CreatedReplicas: 4}
			},
			want: CanaryProgress{RoutedWeight: 100, MarkStable: true, CanaryServiceTarget: "new", Requeue: true},
		},
		"an Inconclusive analysis keeps even a finished canary from becoming stable": {
			steps: []v1alpha1.CanaryStep{setWeight(50)}, index: 1, weight: 100,
			in: func(in *CanaryProgressInput) {
				in.Canary = &ReplicaSetCounts{Replicas: 4, AvailableReplicas: 4, CreatedReplicas: 4}
				in.Status.PauseConditions = []v1alpha1.PauseCondition{paused(v1alpha1.PauseReasonInconclusiveAnalysis, time.Second)}
			},
			want: CanaryProgress{RoutedWeight: 100, CanaryServiceTarget: "new"},
		},
		"an aborted canary runs no step, takes its traffic back and points its Service at the stable pods": {
			steps: []v1alpha1.CanaryStep{setWeight(50), pauseFor("")},
			in: func(in *CanaryProgressInput) {
				in.Start.Aborted, in.Replicas.Aborted, in.Replicas.TrafficRouted = true, true, true
			},
			want: CanaryProgress{CanaryServiceTarget: "old"},
		},
		"an aborted dynamicStableScale canary keeps its Service while the router still sends it traffic": {
			steps: []v1alpha1.CanaryStep{setWeight(50), pauseFor("")},
			in: func(in *CanaryProgressInput) {
				in.Start.Aborted, in.Replicas.Aborted, in.Replicas.TrafficRouted, in.Replicas.DynamicStableScale = true, true, true, true
				in.Replicas.Stable = &ReplicaSetCounts{Replicas: 4, AvailableReplicas: 2, CreatedReplicas: 4}
			},
			want: CanaryProgress{RoutedWeight: 50, CanaryServiceTarget: "new"},
		},
		"an aborted dynamicStableScale canary's Service goes back once the router sends it nothing": {
			steps: []v1alpha1.CanaryStep{setWeight(50), pauseFor("")},
			in: func(in *CanaryProgressInput) {
				in.Start.Aborted, in.Replicas.Aborted, in.Replicas.TrafficRouted, in.Replicas.DynamicStableScale = true, true, true, true
				in.Replicas.Stable = &ReplicaSetCounts{Replicas: 4, AvailableReplicas: 4, CreatedReplicas: 4}
				in.Replicas.Canary = &ReplicaSetCounts{}
			},
			want: CanaryProgress{CanaryServiceTarget: "old"},
		},
		"a stable new revision runs no step": {
			steps: []v1alpha1.CanaryStep{setWeight(50), pauseFor("")}, index: 1,
			in:   func(in *CanaryProgressInput) { in.Start.IsStable, in.Status.StableRS = true, "new" },
			want: CanaryProgress{CanaryServiceTarget: "new"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			st := &v1alpha1.RolloutStatus{StableRS: "old", CurrentPodHash: "new", CurrentStepIndex: ptr(tc.index)}
			canary := &ReplicaSetCounts{Replicas: 2, AvailableReplicas: 2, CreatedReplicas: 2}
			stable := &ReplicaSetCounts{Replicas: 2, AvailableReplicas: 2, CreatedReplicas: 2}
			in := CanaryProgressInput{
				Start:  CanaryStart{Weight: tc.weight},
				Status: st, Hash: "new",
				Replicas:   CanaryInput{Replicas: 4, Weight: tc.weight, Steps: tc.steps, Canary: canary, Stable: stable},
				WantCanary: 2, WantStable: 2,
				Canary: canary, Stable: stable,
				Now: now,
			}
			if tc.in != nil {
				tc.in(&in)
			}
			if got := PlanCanaryProgress(in); got != tc.want {
				t.Errorf("PlanCanaryProgress =\n%+v, want\n%+v", got, tc.want)
			}
		})
	}
}
