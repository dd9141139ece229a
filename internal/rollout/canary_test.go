package rollout

import (
	"fmt"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/skiffcd/skiff/api/v1alpha1"
)

func ptr[T any](v T) *T { return &v }

func count(n int32) *intstr.IntOrString {
	v := intstr.FromInt32(n)
	return &v
}

func percent(s string) *intstr.IntOrString {
	v := intstr.FromString(s)
	return &v
}

func rs(replicas, available int32) *ReplicaSetCounts {
	return &ReplicaSetCounts{Replicas: replicas, AvailableReplicas: available}
}

// The expected counts below were worked out by hand from Argo Rollouts'
// algorithm (utils/replicaset/canary.go); rows marked "Argo" are cases of
// Argo Rollouts' own tests, so both implementations agree on them.
func TestCanaryReplicasBasic(t *testing.T) {
	tests := map[string]struct {
		in         CanaryInput
		wantCanary int32
		wantStable int32
	}{
		// 10 replicas, default 25%: surge 3, unavailable 2 (13 pods at most, 8 available at least).
		"a first step of weight 0 creates no canary and keeps the stable at full": {
			in:         CanaryInput{Replicas: 10, Weight: 0, Stable: rs(10, 10)},
			wantCanary: 0, wantStable: 10,
		},
		"a first step of weight 1 surges one canary pod and keeps ten stable pods because 1 of 11 is closer than 1 of 10": {
			in:         CanaryInput{Replicas: 10, Weight: 1, Stable: rs(10, 10)},
			wantCanary: 1, wantStable: 10,
		},
		"a first step of weight 10 creates one canary and scales the stable to nine": {
			in:         CanaryInput{Replicas: 10, Weight: 10, Stable: rs(10, 10)},
			wantCanary: 1, wantStable: 9,
		},
		"a first step of weight 20 reaches two canary and eight stable pods at once": {
			in:         CanaryInput{Replicas: 10, Weight: 20, Stable: rs(10, 10)},
			wantCanary: 2, wantStable: 8,
		},
		"a first step of weight 33 is bounded by surge 3 and unavailable 2": {
			in:         CanaryInput{Replicas: 10, Weight: 33, Stable: rs(10, 10)},
			wantCanary: 3, wantStable: 8,
		},
		"a first step of weight 40 is bounded by surge 3 and unavailable 2": {
			in:         CanaryInput{Replicas: 10, Weight: 40, Stable: rs(10, 10)},
			wantCanary: 3, wantStable: 8,
		},
		"a first step of weight 50 is bounded by surge 3 and unavailable 2": {
			in:         CanaryInput{Replicas: 10, Weight: 50, Stable: rs(10, 10)},
			wantCanary: 3, wantStable: 8,
		},
		"a first step of weight 60 is bounded by surge 3 and unavailable 2": {
			in:         CanaryInput{Replicas: 10, Weight: 60, Stable: rs(10, 10)},
			wantCanary: 3, wantStable: 8,
		},
		"a first step of weight 99 is bounded by surge 3 and unavailable 2": {
			in:         CanaryInput{Replicas: 10, Weight: 99, Stable: rs(10, 10)},
			wantCanary: 3, wantStable: 8,
		},
		"a first step of weight 100 is bounded by surge 3 and unavailable 2": {
			in:         CanaryInput{Replicas: 10, Weight: 100, Stable: rs(10, 10)},
			wantCanary: 3, wantStable: 8,
		},
		"weight 50 after the first step reaches five and five once the canary pods are available": {
			in:         CanaryInput{Replicas: 10, Weight: 50, Canary: rs(3, 3), Stable: rs(8, 8)},
			wantCanary: 5, wantStable: 5,
		},
		"weight 50 with only one of three canary pods available scales the stable down by one only": {
			in:         CanaryInput{Replicas: 10, Weight: 50, Canary: rs(3, 1), Stable: rs(8, 8)},
			wantCanary: 5, wantStable: 7,
		},
		"weight 99 at steady state keeps one stable pod beside ten canary pods": {
			in:         CanaryInput{Replicas: 10, Weight: 99, Canary: rs(10, 10), Stable: rs(1, 1)},
			wantCanary: 10, wantStable: 1,
		},
		"weight 100 at steady state scales the stable to zero": {
			in:         CanaryInput{Replicas: 10, Weight: 100, Canary: rs(10, 10), Stable: rs(1, 1)},
			wantCanary: 10, wantStable: 0,
		},

		// 100 replicas, default 25%: surge 25, unavailable 25.
		"100 replicas at weight 1 run exactly one canary pod": {
			in:         CanaryInput{Replicas: 100, Weight: 1, Stable: rs(100, 100)},
			wantCanary: 1, wantStable: 99,
		},
		"100 replicas at weight 33 move 25 pods in the first step": {
			in:         CanaryInput{Replicas: 100, Weight: 33, Stable: rs(100, 100)},
			wantCanary: 25, wantStable: 75,
		},
		"100 replicas at weight 50 reach fifty-fifty in the second step": {
			in:         CanaryInput{Replicas: 100, Weight: 50, Canary: rs(25, 25), Stable: rs(75, 75)},
			wantCanary: 50, wantStable: 50,
		},

		// Small replica counts.
		"one replica with the default surge of 1 runs one canary beside the stable at weight 50": {
			in:         CanaryInput{Replicas: 1, Weight: 50, Stable: rs(1, 1)},
			wantCanary: 1, wantStable: 1,
		},
		"one replica at weight 100 scales the stable away once the canary is available": {
			in:         CanaryInput{Replicas: 1, Weight: 100, Canary: rs(1, 1), Stable: rs(1, 1)},
			wantCanary: 1, wantStable: 0,
		},
		"one replica without surge at weight 50 first takes the stable pod down": {
			in:         CanaryInput{Replicas: 1, Weight: 50, MaxSurge: count(0), MaxUnavailable: count(1), Stable: rs(1, 1)},
			wantCanary: 0, wantStable: 0,
		},
		"one replica without surge at weight 50 then starts the canary pod": {
			in:         CanaryInput{Replicas: 1, Weight: 50, MaxSurge: count(0), MaxUnavailable: count(1), Canary: rs(0, 0), Stable: rs(0, 0)},
			wantCanary: 1, wantStable: 0,
		},
		"one replica without surge at weight 40 stays on the stable pod because 0% is closer than 100%": {
			in:         CanaryInput{Replicas: 1, Weight: 40, MaxSurge: count(0), MaxUnavailable: count(1), Stable: rs(1, 1)},
			wantCanary: 0, wantStable: 1,
		},
		"two replicas at weight 1 surge one canary pod": {
			in:         CanaryInput{Replicas: 2, Weight: 1, Stable: rs(2, 2)},
			wantCanary: 1, wantStable: 2,
		},
		"two replicas at weight 60 first surge one canary pod": {
			in:         CanaryInput{Replicas: 2, Weight: 60, Stable: rs(2, 2)},
			wantCanary: 1, wantStable: 2,
		},
		"two replicas at weight 60 then scale the stable down to one": {
			in:         CanaryInput{Replicas: 2, Weight: 60, Canary: rs(1, 1), Stable: rs(2, 2)},
			wantCanary: 1, wantStable: 1,
		},
		"two replicas at weight 60 end with two canary and one stable pod": {
			in:         CanaryInput{Replicas: 2, Weight: 60, Canary: rs(1, 1), Stable: rs(1, 1)},
			wantCanary: 2, wantStable: 1,
		},
		"three replicas at weight 33 surge one canary pod": {
			in:         CanaryInput{Replicas: 3, Weight: 33, Stable: rs(3, 3)},
			wantCanary: 1, wantStable: 3,
		},

		// Surge and unavailable as counts and percentages.
		"surge 1 and unavailable 0 add one canary pod and take none away": {
			in:         CanaryInput{Replicas: 10, Weight: 20, MaxSurge: count(1), MaxUnavailable: count(0), Stable: rs(10, 10)},
			wantCanary: 1, wantStable: 10,
		},
		"Argo: surge 2 as a count scales the canary up": {
			in:         CanaryInput{Replicas: 10, Weight: 20, MaxSurge: count(2), MaxUnavailable: count(0), Canary: rs(0, 0), Stable: rs(10, 10)},
			wantCanary: 2, wantStable: 10,
		},
		"Argo: surge 20% scales the canary up": {
			in:         CanaryInput{Replicas: 10, Weight: 20, MaxSurge: percent("20%"), MaxUnavailable: count(0), Canary: rs(0, 0), Stable: rs(10, 10)},
			wantCanary: 2, wantStable: 10,
		},
		"Argo: extra stable pods go once the canary is available": {
			in:         CanaryInput{Replicas: 10, Weight: 20, MaxSurge: percent("20%"), MaxUnavailable: count(0), Canary: rs(2, 2), Stable: rs(10, 10)},
			wantCanary: 2, wantStable: 8,
		},
		"Argo: the canary does not grow past the surge": {
			in:         CanaryInput{Replicas: 10, Weight: 30, MaxSurge: count(2), MaxUnavailable: count(0), Canary: rs(0, 0), Stable: rs(10, 10)},
			wantCanary: 2, wantStable: 10,
		},
		"Argo: unavailable 2 as a count scales the stable down first": {
			in:         CanaryInput{Replicas: 10, Weight: 20, MaxSurge: count(0), MaxUnavailable: count(2), Canary: rs(0, 0), Stable: rs(10, 10)},
			wantCanary: 0, wantStable: 8,
		},
		"Argo: unavailable 20% scales the stable down first": {
			in:         CanaryInput{Replicas: 10, Weight: 20, MaxSurge: count(0), MaxUnavailable: percent("20%"), Canary: rs(0, 0), Stable: rs(10, 10)},
			wantCanary: 0, wantStable: 8,
		},
		"Argo: the stable does not go below the unavailable limit": {
			in:         CanaryInput{Replicas: 10, Weight: 30, MaxSurge: count(0), MaxUnavailable: count(2), Canary: rs(0, 0), Stable: rs(10, 10)},
			wantCanary: 0, wantStable: 8,
		},
		"Argo: surge and unavailable are used together": {
			in:         CanaryInput{Replicas: 10, Weight: 50, MaxSurge: count(2), MaxUnavailable: count(1), Canary: rs(0, 0), Stable: rs(10, 10)},
			wantCanary: 2, wantStable: 9,
		},
		"Argo: surge and unavailable of 0% still move one pod at a time": {
			in:         CanaryInput{Replicas: 10, Weight: 10, MaxSurge: percent("0%"), MaxUnavailable: percent("0%"), Canary: rs(0, 0), Stable: rs(10, 10)},
			wantCanary: 0, wantStable: 9,
		},
		"a percentage without its % sign counts as a percentage as in Argo Rollouts": {
			in:         CanaryInput{Replicas: 10, Weight: 20, MaxSurge: percent("10"), MaxUnavailable: percent("0"), Stable: rs(10, 10)},
			wantCanary: 1, wantStable: 10,
		},
		"surge 10% of 5 rounds up to one and unavailable 10% rounds down to zero": {
			in:         CanaryInput{Replicas: 5, Weight: 40, MaxSurge: percent("10%"), MaxUnavailable: percent("10%"), Stable: rs(5, 5)},
			wantCanary: 1, wantStable: 5,
		},

		// Rows of Argo Rollouts' own tests.
		"Argo: available pods above spec.replicas are not counted for scaling down": {
			in:         CanaryInput{Replicas: 10, Weight: 100, MaxSurge: count(3), MaxUnavailable: count(0), Canary: rs(6, 3), Stable: rs(7, 8)},
			wantCanary: 6, wantStable: 7,
		},
		"Argo: weight 0 scales the canary to zero": {
			in:         CanaryInput{Replicas: 10, Weight: 0, MaxSurge: count(1), MaxUnavailable: count(1), Canary: rs(1, 1), Stable: rs(10, 10)},
			wantCanary: 0, wantStable: 10,
		},
		"Argo: weight 100 scales the stable to zero": {
			in:         CanaryInput{Replicas: 10, Weight: 100, MaxSurge: count(1), MaxUnavailable: count(1), Canary: rs(10, 10), Stable: rs(1, 1)},
			wantCanary: 10, wantStable: 0,
		},
		"Argo: one replica at weight 20 with a surge keeps one canary pod": {
			in:         CanaryInput{Replicas: 1, Weight: 20, MaxSurge: count(1), MaxUnavailable: count(0), Canary: rs(0, 0), Stable: rs(1, 1)},
			wantCanary: 1, wantStable: 1,
		},
		"Argo: one replica at weight 90 with a surge keeps one stable pod": {
			in:         CanaryInput{Replicas: 1, Weight: 90, MaxSurge: count(1), MaxUnavailable: count(0), Canary: rs(0, 0), Stable: rs(1, 1)},
			wantCanary: 1, wantStable: 1,
		},
		"Argo: the stable scales up before the canary while an older ReplicaSet drains": {
			in: CanaryInput{Replicas: 10, Weight: 30, MaxSurge: count(1), MaxUnavailable: count(0),
				Canary: rs(0, 0), Stable: rs(1, 1), Others: []ReplicaSetCounts{{Replicas: 3, AvailableReplicas: 3}}},
			wantCanary: 1, wantStable: 7,
		},
		"Argo: canary and stable both scale down towards the split": {
			in:         CanaryInput{Replicas: 10, Weight: 30, MaxSurge: count(0), MaxUnavailable: count(3), Canary: rs(4, 4), Stable: rs(8, 5)},
			wantCanary: 3, wantStable: 7,
		},
		"Argo: the stable scales down to what is available": {
			in:         CanaryInput{Replicas: 10, Weight: 100, MaxSurge: count(1), MaxUnavailable: count(0), Canary: rs(10, 8), Stable: rs(10, 2)},
			wantCanary: 9, wantStable: 2,
		},
		"Argo: nothing scales down while an older ReplicaSet still has pods": {
			in: CanaryInput{Replicas: 10, Weight: 30, MaxSurge: count(0), MaxUnavailable: count(1),
				Canary: rs(4, 2), Stable: rs(8, 6), Others: []ReplicaSetCounts{{Replicas: 3, AvailableReplicas: 3}}},
			wantCanary: 4, wantStable: 8,
		},
		"Argo: an uneven weight without surge does not round past spec.replicas": {
			in:         CanaryInput{Replicas: 10, Weight: 5, MaxSurge: count(0), MaxUnavailable: count(1), Canary: rs(0, 0), Stable: rs(10, 10)},
			wantCanary: 0, wantStable: 9,
		},
		"Argo: an uneven weight without surge then adds the canary pod": {
			in:         CanaryInput{Replicas: 10, Weight: 5, MaxSurge: count(0), MaxUnavailable: count(1), Canary: rs(0, 0), Stable: rs(9, 9)},
			wantCanary: 1, wantStable: 9,
		},
		"Argo: setCanaryScale is ignored without a traffic router": {
			in: CanaryInput{Replicas: 10, Weight: 20, MaxSurge: percent("20%"), MaxUnavailable: count(0), Canary: rs(0, 0), Stable: rs(10, 10),
				SetCanaryScale: &v1alpha1.SetCanaryScale{Replicas: ptr(int32(9)), Weight: ptr(int32(100))}},
			wantCanary: 2, wantStable: 10,
		},
		"Argo: the canary surges by one only while the stable is unavailable": {
			in:         CanaryInput{Replicas: 4, Weight: 100, MaxSurge: count(1), MaxUnavailable: count(0), Canary: rs(0, 0), Stable: rs(4, 1)},
			wantCanary: 1, wantStable: 4,
		},
		"Argo: scaling down to the unavailable limit does not exceed the surge": {
			in:         CanaryInput{Replicas: 3, Weight: 99, MaxSurge: count(0), MaxUnavailable: count(2), Canary: rs(0, 0), Stable: rs(3, 3)},
			wantCanary: 0, wantStable: 1,
		},
		"Argo: scaling down to the unavailable limit does not exceed the surge (part 2)": {
			in:         CanaryInput{Replicas: 3, Weight: 99, MaxSurge: count(0), MaxUnavailable: count(2), Canary: rs(0, 0), Stable: rs(1, 1)},
			wantCanary: 2, wantStable: 1,
		},
		"Argo: an unavailable stable scales down by one only with unavailable 0": {
			in:         CanaryInput{Replicas: 4, Weight: 100, MaxSurge: count(1), MaxUnavailable: count(0), Canary: rs(1, 1), Stable: rs(4, 1)},
			wantCanary: 1, wantStable: 3,
		},
		"Argo: weight 0 brings the stable up before the canary goes down": {
			in:         CanaryInput{Replicas: 4, Weight: 0, MaxSurge: count(1), MaxUnavailable: count(0), Canary: rs(4, 4), Stable: rs(0, 0)},
			wantCanary: 4, wantStable: 1,
		},
		"Argo: weight 0 keeps the canary while the new stable pod is not available": {
			in:         CanaryInput{Replicas: 4, Weight: 0, MaxSurge: count(1), MaxUnavailable: count(0), Canary: rs(4, 4), Stable: rs(1, 0)},
			wantCanary: 4, wantStable: 1,
		},
		"Argo: weight 0 takes one canary pod away once the stable pod is available": {
			in:         CanaryInput{Replicas: 4, Weight: 0, MaxSurge: count(1), MaxUnavailable: count(0), Canary: rs(4, 4), Stable: rs(1, 1)},
			wantCanary: 3, wantStable: 1,
		},
		"Argo: a full promotion ignores the step weight": {
			in:         CanaryInput{Replicas: 4, Weight: 100, MaxSurge: count(4), MaxUnavailable: count(4), Canary: rs(0, 0), Stable: rs(4, 4)},
			wantCanary: 4, wantStable: 0,
		},
		"Argo: a full promotion still honours surge and unavailable": {
			in:         CanaryInput{Replicas: 4, Weight: 100, MaxSurge: count(3), MaxUnavailable: count(0), Canary: rs(0, 0), Stable: rs(4, 4)},
			wantCanary: 3, wantStable: 4,
		},

		// Canary not yet created, no stable, abort.
		"a canary that does not exist yet is sized like one with no pods": {
			in:         CanaryInput{Replicas: 10, Weight: 50, MaxSurge: count(2), MaxUnavailable: count(1), Stable: rs(10, 10)},
			wantCanary: 2, wantStable: 9,
		},
		"the first deploy without a stable ReplicaSet goes to full size at once": {
			in:         CanaryInput{Replicas: 5, Weight: 20},
			wantCanary: 5, wantStable: 0,
		},
		"Argo: without a stable ReplicaSet the new one grows to spec.replicas": {
			in:         CanaryInput{Replicas: 10, Weight: 10, MaxSurge: count(0), MaxUnavailable: count(1), Canary: rs(9, 9)},
			wantCanary: 10, wantStable: 0,
		},
		"an abort brings the stable up within the surge and takes canary pods down within unavailable": {
			in:         CanaryInput{Replicas: 10, Weight: 50, Aborted: true, Canary: rs(5, 5), Stable: rs(5, 5)},
			wantCanary: 3, wantStable: 8,
		},
		"an abort finishes with the stable at full and no canary": {
			in:         CanaryInput{Replicas: 10, Weight: 50, Aborted: true, Canary: rs(1, 1), Stable: rs(10, 10)},
			wantCanary: 0, wantStable: 10,
		},
		"when spec.replicas shrinks the canary gives up pods over the surge and keeps the available stable ones": {
			in:         CanaryInput{Replicas: 5, Weight: 50, MaxSurge: count(2), MaxUnavailable: count(0), Canary: rs(5, 0), Stable: rs(5, 5)},
			wantCanary: 2, wantStable: 5,
		},
		"when spec.replicas shrinks with all pods available both sides shrink within the surge": {
			in:         CanaryInput{Replicas: 5, Weight: 50, Canary: rs(5, 5), Stable: rs(5, 5)},
			wantCanary: 3, wantStable: 4,
		},
		"zero replicas run no pods at all": {
			in:         CanaryInput{Replicas: 0, Weight: 50, Canary: rs(0, 0), Stable: rs(0, 0)},
			wantCanary: 0, wantStable: 0,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			canary, stable := CanaryReplicas(tc.in)
			if canary != tc.wantCanary || stable != tc.wantStable {
				t.Errorf("CanaryReplicas() = canary %d, stable %d; want canary %d, stable %d", canary, stable, tc.wantCanary, tc.wantStable)
			}
		})
	}
}

func TestCanaryReplicasTrafficRouted(t *testing.T) {
	weights := func(canary, stable int32) *v1alpha1.TrafficWeights {
		return &v1alpha1.TrafficWeights{Canary: v1alpha1.WeightDestination{Weight: canary}, Stable: v1alpha1.WeightDestination{Weight: stable}}
	}
	tests := map[string]struct {
		in         CanaryInput
		wantCanary int32
		wantStable int32
	}{
		"the canary gets the weight's share of pods rounded up and the stable stays at full": {
			in:         CanaryInput{Replicas: 10, Weight: 33, TrafficRouted: true, Canary: rs(0, 0), Stable: rs(10, 10)},
			wantCanary: 4, wantStable: 10,
		},
		"weight 1 of 100 replicas is one canary pod": {
			in:         CanaryInput{Replicas: 100, Weight: 1, TrafficRouted: true, Stable: rs(100, 100)},
			wantCanary: 1, wantStable: 100,
		},
		"weight 0 runs no canary": {
			in:         CanaryInput{Replicas: 10, Weight: 0, TrafficRouted: true, Canary: rs(3, 3), Stable: rs(10, 10)},
			wantCanary: 0, wantStable: 10,
		},
		"weight 100 runs a full canary beside the full stable": {
			in:         CanaryInput{Replicas: 10, Weight: 100, TrafficRouted: true, Canary: rs(5, 5), Stable: rs(10, 10)},
			wantCanary: 10, wantStable: 10,
		},
		"surge and unavailable do not bound the traffic-routed canary": {
			in:         CanaryInput{Replicas: 10, Weight: 60, MaxSurge: count(1), MaxUnavailable: count(0), TrafficRouted: true, Canary: rs(0, 0), Stable: rs(10, 10)},
			wantCanary: 6, wantStable: 10,
		},
		"Argo: minPodsPerReplicaSet raises a small canary": {
			in:         CanaryInput{Replicas: 10, Weight: 5, TrafficRouted: true, MinPodsPerReplicaSet: ptr(int32(2)), Canary: rs(0, 0), Stable: rs(10, 10)},
			wantCanary: 2, wantStable: 10,
		},
		"minPodsPerReplicaSet does not start a canary at weight 0": {
			in:         CanaryInput{Replicas: 10, Weight: 0, TrafficRouted: true, MinPodsPerReplicaSet: ptr(int32(2)), Stable: rs(10, 10)},
			wantCanary: 0, wantStable: 10,
		},
		"Argo: setCanaryScale replicas sets the canary size regardless of the weight": {
			in: CanaryInput{Replicas: 1, Weight: 100, TrafficRouted: true, Stable: rs(1, 1),
				SetCanaryScale: &v1alpha1.SetCanaryScale{Replicas: ptr(int32(9))}},
			wantCanary: 9, wantStable: 1,
		},
		"Argo: setCanaryScale weight sizes the canary from that weight, even above 100": {
			in: CanaryInput{Replicas: 4, Weight: 100, TrafficRouted: true, Stable: rs(4, 4),
				SetCanaryScale: &v1alpha1.SetCanaryScale{Weight: ptr(int32(200))}},
			wantCanary: 8, wantStable: 4,
		},
		"setCanaryScale weight 25 of 10 replicas is three canary pods": {
			in: CanaryInput{Replicas: 10, Weight: 5, TrafficRouted: true, Stable: rs(10, 10),
				SetCanaryScale: &v1alpha1.SetCanaryScale{Weight: ptr(int32(25))}},
			wantCanary: 3, wantStable: 10,
		},
		"Argo: setCanaryScale matchTrafficWeight sizes the canary from the step weight": {
			in: CanaryInput{Replicas: 10, Weight: 20, TrafficRouted: true, Canary: rs(0, 0), Stable: rs(10, 10),
				SetCanaryScale: &v1alpha1.SetCanaryScale{Replicas: ptr(int32(9)), Weight: ptr(int32(100)), MatchTrafficWeight: true}},
			wantCanary: 2, wantStable: 10,
		},
		"Argo: an abort ignores setCanaryScale and scales the canary down": {
			in: CanaryInput{Replicas: 1, TrafficRouted: true, Aborted: true, Canary: rs(1, 1), Stable: rs(1, 1),
				SetCanaryScale: &v1alpha1.SetCanaryScale{Replicas: ptr(int32(1))}},
			wantCanary: 0, wantStable: 1,
		},
		"Argo: an abort with abortScaleDownDelaySeconds 0 keeps the setCanaryScale canary": {
			in: CanaryInput{Replicas: 1, TrafficRouted: true, Aborted: true, KeepCanaryScaleOnAbort: true, Canary: rs(1, 1), Stable: rs(1, 1),
				SetCanaryScale: &v1alpha1.SetCanaryScale{Replicas: ptr(int32(1))}},
			wantCanary: 1, wantStable: 1,
		},
		"an abort without setCanaryScale scales the canary to zero": {
			in:         CanaryInput{Replicas: 10, Weight: 50, TrafficRouted: true, Aborted: true, Canary: rs(5, 5), Stable: rs(10, 10)},
			wantCanary: 0, wantStable: 10,
		},
		"the first deploy without a stable ReplicaSet runs the full canary": {
			in: CanaryInput{Replicas: 5, Weight: 20, TrafficRouted: true,
				SetCanaryScale: &v1alpha1.SetCanaryScale{Replicas: ptr(int32(1))}},
			wantCanary: 5, wantStable: 0,
		},
		"dynamicStableScale without known weights sizes the stable for the rest of the traffic": {
			in:         CanaryInput{Replicas: 10, Weight: 30, TrafficRouted: true, DynamicStableScale: true, Stable: rs(10, 10)},
			wantCanary: 3, wantStable: 7,
		},
		"Argo: dynamicStableScale scales the stable down with its traffic": {
			in:         CanaryInput{Replicas: 10, Weight: 10, TrafficRouted: true, DynamicStableScale: true, Stable: rs(10, 10), CurrentWeights: weights(10, 90)},
			wantCanary: 1, wantStable: 9,
		},
		"Argo: dynamicStableScale keeps the stable for the traffic it still gets": {
			in:         CanaryInput{Replicas: 10, Weight: 20, TrafficRouted: true, DynamicStableScale: true, Stable: rs(10, 10), CurrentWeights: weights(10, 90)},
			wantCanary: 2, wantStable: 9,
		},
		"Argo: dynamicStableScale on abort keeps the canary while it still gets traffic": {
			in:         CanaryInput{Replicas: 10, Weight: 20, Aborted: true, TrafficRouted: true, DynamicStableScale: true, Stable: rs(8, 8), Canary: rs(2, 2), CurrentWeights: weights(20, 80)},
			wantCanary: 2, wantStable: 10,
		},
		"Argo: dynamicStableScale on abort shrinks the canary with its traffic": {
			in:         CanaryInput{Replicas: 10, Weight: 20, Aborted: true, TrafficRouted: true, DynamicStableScale: true, Stable: rs(8, 8), Canary: rs(2, 2), CurrentWeights: weights(10, 90)},
			wantCanary: 1, wantStable: 10,
		},
		"dynamicStableScale with setCanaryScale replicas keeps the stable at full": {
			in: CanaryInput{Replicas: 10, Weight: 50, TrafficRouted: true, DynamicStableScale: true, Stable: rs(10, 10),
				SetCanaryScale: &v1alpha1.SetCanaryScale{Replicas: ptr(int32(2))}},
			wantCanary: 2, wantStable: 10,
		},
		"dynamicStableScale raises both sides to minPodsPerReplicaSet": {
			in:         CanaryInput{Replicas: 10, Weight: 90, TrafficRouted: true, DynamicStableScale: true, MinPodsPerReplicaSet: ptr(int32(3)), Stable: rs(10, 10)},
			wantCanary: 9, wantStable: 3,
		},
		"minPodsPerReplicaSet above spec.replicas is capped at spec.replicas": {
			in:         CanaryInput{Replicas: 3, Weight: 10, TrafficRouted: true, MinPodsPerReplicaSet: ptr(int32(5)), Canary: rs(0, 0), Stable: rs(3, 3)},
			wantCanary: 3, wantStable: 3,
		},
		"with dynamicStableScale minPodsPerReplicaSet above spec.replicas is capped on both sides": {
			in:         CanaryInput{Replicas: 2, Weight: 50, TrafficRouted: true, DynamicStableScale: true, MinPodsPerReplicaSet: ptr(int32(4)), Canary: rs(1, 1), Stable: rs(2, 2), CurrentWeights: weights(50, 50)},
			wantCanary: 2, wantStable: 2,
		},
		"an aborted dynamicStableScale canary sizes the stable side for the last step it has outgrown": {
			in: CanaryInput{Replicas: 10, Aborted: true, TrafficRouted: true, DynamicStableScale: true, Steps: setWeights(20, 50, 80),
				Canary: rs(8, 8), Stable: rs(2, 2), CurrentWeights: weights(80, 20)},
			wantCanary: 8, wantStable: 5,
		},
		"an aborted dynamicStableScale canary without steps sizes the stable side for all traffic": {
			in: CanaryInput{Replicas: 10, Aborted: true, TrafficRouted: true, DynamicStableScale: true,
				Canary: rs(8, 8), Stable: rs(2, 2), CurrentWeights: weights(80, 20)},
			wantCanary: 8, wantStable: 10,
		},
		"an aborted dynamicStableScale canary does not shrink the stable side whose status is not updated yet": {
			// The last pass scaled the stable side to 5; its status still
			// counts no pod, which alone would aim at the 80 % step again.
			in: CanaryInput{Replicas: 10, Aborted: true, TrafficRouted: true, DynamicStableScale: true, Steps: setWeights(20, 50, 80),
				Canary: rs(8, 8), Stable: rs(5, 0), CurrentWeights: weights(80, 20)},
			wantCanary: 8, wantStable: 5,
		},
		"an aborted dynamicStableScale canary does not grow back while its traffic is still held": {
			// The canary went down to 5 with its traffic at 50 %; the router
			// still shows 80 % to the status of this pass.
			in: CanaryInput{Replicas: 10, Aborted: true, TrafficRouted: true, DynamicStableScale: true, Steps: setWeights(20, 50, 80),
				Canary: rs(5, 0), Stable: rs(8, 0), CurrentWeights: weights(80, 20)},
			wantCanary: 5, wantStable: 8,
		},
		"dynamicStableScale at weight 100 scales the stable to zero": {
			in:         CanaryInput{Replicas: 10, Weight: 100, TrafficRouted: true, DynamicStableScale: true, MinPodsPerReplicaSet: ptr(int32(3)), Stable: rs(1, 1), CurrentWeights: weights(100, 0)},
			wantCanary: 10, wantStable: 0,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			canary, stable := CanaryReplicas(tc.in)
			if canary != tc.wantCanary || stable != tc.wantStable {
				t.Errorf("CanaryReplicas() = canary %d, stable %d; want canary %d, stable %d", canary, stable, tc.wantCanary, tc.wantStable)
			}
		})
	}
}

func setWeights(weights ...int32) []v1alpha1.CanaryStep {
	var steps []v1alpha1.CanaryStep
	for _, w := range weights {
		steps = append(steps, v1alpha1.CanaryStep{SetWeight: ptr(w)}, v1alpha1.CanaryStep{Pause: &v1alpha1.RolloutPause{}})
	}
	return steps
}

// An abort of a dynamicStableScale canary at 80 % does not bring the
// stable side from 2 to 10 pods and all traffic back at once: pass by pass
// the stable side grows to the next lower setWeight step, the router's
// weight follows once those stable pods are available, and the canary
// shrinks once its traffic is gone (Argo Rollouts' GetDesiredCanaryWeight
// and calculateDesiredWeightOnAbortOrStableRollback, worked by hand).
func TestAbortWithDynamicStableScaleStepsBack(t *testing.T) {
	type pass struct{ canary, stable, weight int32 }
	want := []pass{
		{8, 5, 80}, // the stable side grows to the 50 % step; traffic waits for it
		{8, 5, 50}, // the stable pods are there: half the traffic moves back
		{5, 5, 50}, // the canary follows its traffic down
		{5, 8, 50}, // the stable side grows to the 20 % step
		{5, 8, 20},
		{2, 8, 20},
		{2, 10, 20}, // past the first step: the stable side grows to full size
		{2, 10, 0},
		{0, 10, 0},
	}
	in := CanaryInput{Replicas: 10, Aborted: true, TrafficRouted: true, DynamicStableScale: true, Steps: setWeights(20, 50, 80),
		Canary: rs(8, 8), Stable: rs(2, 2),
		CurrentWeights: &v1alpha1.TrafficWeights{Canary: v1alpha1.WeightDestination{Weight: 80}, Stable: v1alpha1.WeightDestination{Weight: 20}}}
	var got []pass
	for range want {
		canary, stable := CanaryReplicas(in)
		weight := AbortTrafficWeight(in)
		got = append(got, pass{canary, stable, weight})
		// Before the next pass the pods come up and the router takes the weight.
		in.Canary, in.Stable = rs(canary, canary), rs(stable, stable)
		in.CurrentWeights = &v1alpha1.TrafficWeights{Canary: v1alpha1.WeightDestination{Weight: weight}, Stable: v1alpha1.WeightDestination{Weight: 100 - weight}}
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("passes (canary, stable, weight):\n got %v\nwant %v", got, want)
	}
}

func TestAbortTrafficWeight(t *testing.T) {
	weights := func(canary int32) *v1alpha1.TrafficWeights {
		return &v1alpha1.TrafficWeights{Canary: v1alpha1.WeightDestination{Weight: canary}, Stable: v1alpha1.WeightDestination{Weight: 100 - canary}}
	}
	tests := map[string]struct {
		in   CanaryInput
		want int32
	}{
		"without dynamicStableScale all traffic goes back at once": {
			in:   CanaryInput{Replicas: 10, Aborted: true, TrafficRouted: true, Steps: setWeights(20, 50), Canary: rs(5, 5), Stable: rs(10, 10), CurrentWeights: weights(50)},
			want: 0,
		},
		"with dynamicStableScale the canary keeps what the stable pods cannot take": {
			in:   CanaryInput{Replicas: 10, Aborted: true, TrafficRouted: true, DynamicStableScale: true, Steps: setWeights(20, 50), Canary: rs(5, 5), Stable: rs(5, 5), CurrentWeights: weights(50)},
			want: 50,
		},
		"with dynamicStableScale and no weights known yet the canary keeps what the stable pods cannot take": {
			in:   CanaryInput{Replicas: 10, Aborted: true, TrafficRouted: true, DynamicStableScale: true, Steps: setWeights(20, 50), Canary: rs(5, 5), Stable: rs(6, 6)},
			want: 40,
		},
		"the weight never rises again when stable pods go away": {
			in:   CanaryInput{Replicas: 10, Aborted: true, TrafficRouted: true, DynamicStableScale: true, Canary: rs(2, 2), Stable: rs(7, 7), CurrentWeights: weights(10)},
			want: 10,
		},
		"without a stable ReplicaSet there is nothing to go back to": {
			in:   CanaryInput{Replicas: 10, Aborted: true, TrafficRouted: true, DynamicStableScale: true, Canary: rs(5, 5), CurrentWeights: weights(50)},
			want: 0,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := AbortTrafficWeight(tc.in); got != tc.want {
				t.Errorf("AbortTrafficWeight = %d, want %d", got, tc.want)
			}
		})
	}
}

func TestCanaryAbortScaleDownDelay(t *testing.T) {
	routed := &v1alpha1.RolloutTrafficRouting{}
	tests := map[string]struct {
		canary      v1alpha1.CanaryStrategy
		wantDelayed bool
		wantDelay   time.Duration
	}{
		"a basic canary goes down at once":                       {canary: v1alpha1.CanaryStrategy{AbortScaleDownDelaySeconds: ptr(int32(10))}},
		"a traffic-routed canary waits 30 s by default":          {canary: v1alpha1.CanaryStrategy{TrafficRouting: routed}, wantDelayed: true, wantDelay: 30 * time.Second},
		"abortScaleDownDelaySeconds sets the wait":               {canary: v1alpha1.CanaryStrategy{TrafficRouting: routed, AbortScaleDownDelaySeconds: ptr(int32(5))}, wantDelayed: true, wantDelay: 5 * time.Second},
		"abortScaleDownDelaySeconds 0 leaves the canary up":      {canary: v1alpha1.CanaryStrategy{TrafficRouting: routed, AbortScaleDownDelaySeconds: ptr(int32(0))}},
		"dynamicStableScale shrinks the canary with its traffic": {canary: v1alpha1.CanaryStrategy{TrafficRouting: routed, DynamicStableScale: true}},
		"dynamicStableScale with an explicit delay waits": {
			canary: v1alpha1.CanaryStrategy{TrafficRouting: routed, DynamicStableScale: true, AbortScaleDownDelaySeconds: ptr(int32(7))}, wantDelayed: true, wantDelay: 7 * time.Second,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			delay, delayed := CanaryAbortScaleDownDelay(&tc.canary)
			if delayed != tc.wantDelayed || delay != tc.wantDelay {
				t.Errorf("CanaryAbortScaleDownDelay = %s, %v; want %s, %v", delay, delayed, tc.wantDelay, tc.wantDelayed)
			}
		})
	}
}

func TestAtDesiredCounts(t *testing.T) {
	created := func(replicas, available, created int32) *ReplicaSetCounts {
		return &ReplicaSetCounts{Replicas: replicas, AvailableReplicas: available, CreatedReplicas: created}
	}
	tests := map[string]struct {
		in                     CanaryInput
		wantCanary, wantStable int32
		want                   bool
	}{
		"the canary's pods are all available and the stable's created": {
			in: CanaryInput{Canary: created(2, 2, 2), Stable: created(8, 6, 8)}, wantCanary: 2, wantStable: 8, want: true,
		},
		"a canary pod not yet available holds the step": {
			in: CanaryInput{Canary: created(2, 1, 2), Stable: created(8, 8, 8)}, wantCanary: 2, wantStable: 8,
		},
		"a canary not yet scaled holds the step": {
			in: CanaryInput{Canary: created(1, 1, 1), Stable: created(8, 8, 8)}, wantCanary: 2, wantStable: 8,
		},
		"stable pods not yet created hold the step": {
			in: CanaryInput{Canary: created(2, 2, 2), Stable: created(8, 7, 7)}, wantCanary: 2, wantStable: 8,
		},
		"stable pods not yet removed hold the step": {
			in: CanaryInput{Canary: created(2, 2, 2), Stable: created(8, 8, 9)}, wantCanary: 2, wantStable: 8,
		},
		"with dynamicStableScale the stable side follows the traffic and is not waited for": {
			in:         CanaryInput{TrafficRouted: true, DynamicStableScale: true, Canary: created(2, 2, 2), Stable: created(10, 10, 10)},
			wantCanary: 2, wantStable: 8, want: true,
		},
		"without a router an older ReplicaSet's available pod holds the step": {
			in:         CanaryInput{Canary: created(2, 2, 2), Stable: created(8, 8, 8), Others: []ReplicaSetCounts{{Replicas: 0, AvailableReplicas: 1}}},
			wantCanary: 2, wantStable: 8,
		},
		"with a router older pods get no traffic and do not hold the step": {
			in:         CanaryInput{TrafficRouted: true, Canary: created(2, 2, 2), Stable: created(8, 8, 8), Others: []ReplicaSetCounts{{Replicas: 4, AvailableReplicas: 4}}},
			wantCanary: 2, wantStable: 8, want: true,
		},
		"without a stable ReplicaSet only the canary counts": {
			in: CanaryInput{Canary: created(10, 10, 10)}, wantCanary: 10, want: true,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := AtDesiredCounts(tc.in, tc.wantCanary, tc.wantStable); got != tc.want {
				t.Errorf("AtDesiredCounts = %v, want %v", got, tc.want)
			}
		})
	}
}

// Argo Rollouts' own table for its weight approximation.
func TestClosestCanaryStableSplit(t *testing.T) {
	tests := []struct{ replicas, weight, surge, canary, stable int32 }{
		{0, 0, 0, 0, 0}, {0, 50, 0, 0, 0}, {0, 100, 0, 0, 0},
		{0, 0, 1, 0, 0}, {0, 50, 1, 0, 0}, {0, 100, 1, 0, 0},
		{1, 0, 0, 0, 1}, {1, 1, 0, 0, 1}, {1, 49, 0, 0, 1}, {1, 50, 0, 1, 0}, {1, 99, 0, 1, 0}, {1, 100, 0, 1, 0},
		{1, 0, 1, 0, 1}, {1, 1, 1, 1, 1}, {1, 49, 1, 1, 1}, {1, 50, 1, 1, 1}, {1, 99, 1, 1, 1}, {1, 100, 1, 1, 0},
		{2, 0, 0, 0, 2}, {2, 1, 0, 1, 1}, {2, 50, 0, 1, 1}, {2, 99, 0, 1, 1}, {2, 100, 0, 2, 0},
		{2, 0, 1, 0, 2}, {2, 1, 1, 1, 2}, {2, 50, 1, 1, 1}, {2, 99, 1, 2, 1}, {2, 100, 1, 2, 0},
		{3, 10, 0, 1, 2}, {3, 25, 0, 1, 2}, {3, 33, 0, 1, 2}, {3, 34, 0, 1, 2}, {3, 49, 0, 1, 2}, {3, 50, 0, 2, 1},
		{3, 10, 1, 1, 3}, {3, 25, 1, 1, 3}, {3, 33, 1, 1, 2}, {3, 34, 1, 1, 2}, {3, 49, 1, 2, 2}, {3, 50, 1, 2, 2},
		{10, 0, 1, 0, 10}, {10, 1, 0, 1, 9}, {10, 14, 0, 1, 9}, {10, 15, 0, 2, 8}, {10, 16, 0, 2, 8}, {10, 99, 0, 9, 1}, {10, 100, 1, 10, 0},
		{10, 1, 1, 1, 10}, {10, 18, 1, 2, 9}, {10, 19, 1, 2, 9}, {10, 20, 1, 2, 8}, {10, 23, 1, 2, 8}, {10, 24, 1, 3, 8}, {10, 25, 1, 3, 8}, {10, 99, 1, 10, 1},
		// Worked out by hand: a tie prefers the larger canary.
		{4, 50, 0, 2, 2}, {5, 50, 0, 3, 2}, {5, 10, 0, 1, 4}, {5, 90, 0, 4, 1}, {7, 50, 0, 4, 3}, {100, 33, 25, 33, 67}, {100, 1, 25, 1, 99},
		// Argo Rollouts returns 0 and spec.replicas here (no candidate survives its
		// tie rule); Skiff keeps both sides running as the weight asks.
		{2, 75, 0, 1, 1}, {10, 95, 0, 9, 1}, {50, 99, 0, 49, 1},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprintf("%d replicas at weight %d with surge %d split %d to %d", tc.replicas, tc.weight, tc.surge, tc.canary, tc.stable), func(t *testing.T) {
			canary, stable := closestCanaryStableSplit(tc.replicas, tc.weight, tc.surge)
			if canary != tc.canary || stable != tc.stable {
				t.Errorf("closestCanaryStableSplit() = %d, %d; want %d, %d", canary, stable, tc.canary, tc.stable)
			}
		})
	}
}

func TestFenceposts(t *testing.T) {
	tests := map[string]struct {
		surge, unavailable         *intstr.IntOrString
		replicas                   int32
		wantSurge, wantUnavailable int32 // from CanaryFenceposts
		wantAloneUnavailable       int32 // from MaxUnavailableCount
	}{
		"the defaults of 25% of 10 round surge up to 3 and unavailable down to 2": {
			replicas: 10, wantSurge: 3, wantUnavailable: 2, wantAloneUnavailable: 2,
		},
		"the defaults of 25% of 1 are surge 1 and unavailable 0": {
			replicas: 1, wantSurge: 1, wantUnavailable: 0, wantAloneUnavailable: 0,
		},
		"the defaults of 25% of 100 are 25 each": {
			replicas: 100, wantSurge: 25, wantUnavailable: 25, wantAloneUnavailable: 25,
		},
		"counts are taken as they are": {
			surge: count(2), unavailable: count(1), replicas: 10, wantSurge: 2, wantUnavailable: 1, wantAloneUnavailable: 1,
		},
		"unavailable is capped at replicas": {
			surge: count(0), unavailable: count(7), replicas: 3, wantSurge: 0, wantUnavailable: 3, wantAloneUnavailable: 3,
		},
		"both resolving to 0 make unavailable 1": {
			surge: percent("0%"), unavailable: percent("0%"), replicas: 10, wantSurge: 0, wantUnavailable: 1, wantAloneUnavailable: 0,
		},
		"percentages that round to 0 also make unavailable 1": {
			surge: count(0), unavailable: percent("5%"), replicas: 10, wantSurge: 0, wantUnavailable: 1, wantAloneUnavailable: 0,
		},
		"a string without % is a percentage": {
			surge: percent("25"), unavailable: percent("25"), replicas: 10, wantSurge: 3, wantUnavailable: 2, wantAloneUnavailable: 2,
		},
		"zero replicas allow no unavailable pods": {
			surge: count(1), unavailable: count(1), replicas: 0, wantSurge: 1, wantUnavailable: 0, wantAloneUnavailable: 0,
		},
		"an invalid value resolves both to 0": {
			surge: percent("many"), unavailable: count(1), replicas: 10, wantSurge: 0, wantUnavailable: 0, wantAloneUnavailable: 1,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			surge, unavailable := CanaryFenceposts(tc.surge, tc.unavailable, tc.replicas)
			if surge != tc.wantSurge || unavailable != tc.wantUnavailable {
				t.Errorf("CanaryFenceposts() = %d, %d; want %d, %d", surge, unavailable, tc.wantSurge, tc.wantUnavailable)
			}
			if got := MaxUnavailableCount(tc.unavailable, tc.replicas); got != tc.wantAloneUnavailable {
				t.Errorf("MaxUnavailableCount() = %d; want %d", got, tc.wantAloneUnavailable)
			}
			if tc.surge == nil || tc.surge.StrVal != "many" {
				if got := MaxSurgeCount(tc.surge, tc.replicas); got != tc.wantSurge {
					t.Errorf("MaxSurgeCount() = %d; want %d", got, tc.wantSurge)
				}
			} else if got := MaxSurgeCount(tc.surge, tc.replicas); got != 0 {
				t.Errorf("MaxSurgeCount() = %d; want 0 for an invalid value", got)
			}
		})
	}
}

func TestDesiredWeightAndSetCanaryScale(t *testing.T) {
	weight := func(w int32) v1alpha1.CanaryStep { return v1alpha1.CanaryStep{SetWeight: ptr(w)} }
	pause := v1alpha1.CanaryStep{Pause: &v1alpha1.RolloutPause{}}
	scale := func(s v1alpha1.SetCanaryScale) v1alpha1.CanaryStep { return v1alpha1.CanaryStep{SetCanaryScale: &s} }
	threeReplicas := v1alpha1.SetCanaryScale{Replicas: ptr(int32(3))}
	halfWeight := v1alpha1.SetCanaryScale{Weight: ptr(int32(50))}

	steps := []v1alpha1.CanaryStep{
		pause,                // 0
		weight(20),           // 1
		pause,                // 2
		scale(threeReplicas), // 3
		weight(40),           // 4
		scale(halfWeight),    // 5
		pause,                // 6
		scale(v1alpha1.SetCanaryScale{MatchTrafficWeight: true}), // 7
		weight(60), // 8
	}
	tests := map[string]struct {
		steps      []v1alpha1.CanaryStep
		index      *int32
		aborted    bool
		wantWeight int32
		wantScale  *v1alpha1.SetCanaryScale
	}{
		"no steps mean weight 100":                                {steps: nil, index: nil, wantWeight: 100},
		"before any setWeight the weight is 0":                    {steps: steps, index: ptr(int32(0)), wantWeight: 0},
		"a nil index is the first step":                           {steps: steps, index: nil, wantWeight: 0},
		"a setWeight step sets its weight":                        {steps: steps, index: ptr(int32(1)), wantWeight: 20},
		"a pause keeps the weight of the setWeight before it":     {steps: steps, index: ptr(int32(2)), wantWeight: 20},
		"a setCanaryScale applies from its step":                  {steps: steps, index: ptr(int32(3)), wantWeight: 20, wantScale: &threeReplicas},
		"a later setWeight does not end the setCanaryScale":       {steps: steps, index: ptr(int32(4)), wantWeight: 40, wantScale: &threeReplicas},
		"a later setCanaryScale replaces the earlier one":         {steps: steps, index: ptr(int32(6)), wantWeight: 40, wantScale: &halfWeight},
		"matchTrafficWeight ends the setCanaryScale":              {steps: steps, index: ptr(int32(7)), wantWeight: 40},
		"after matchTrafficWeight the weight decides again":       {steps: steps, index: ptr(int32(8)), wantWeight: 60},
		"when all steps are done the weight is 100":               {steps: steps, index: ptr(int32(9)), wantWeight: 100},
		"an abort makes the weight 0":                             {steps: steps, index: ptr(int32(8)), aborted: true, wantWeight: 0},
		"an abort after all steps still makes the weight 0":       {steps: steps, index: ptr(int32(9)), aborted: true, wantWeight: 0},
		"steps without setWeight run at weight 0 until done":      {steps: []v1alpha1.CanaryStep{pause}, index: ptr(int32(0)), wantWeight: 0},
		"an index past the end of steps without setWeight is 100": {steps: []v1alpha1.CanaryStep{pause}, index: ptr(int32(1)), wantWeight: 100},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := DesiredWeight(tc.steps, tc.index, tc.aborted); got != tc.wantWeight {
				t.Errorf("DesiredWeight() = %d; want %d", got, tc.wantWeight)
			}
			got := CurrentSetCanaryScale(tc.steps, tc.index)
			if (got == nil) != (tc.wantScale == nil) || (got != nil && fmt.Sprint(*got) != fmt.Sprint(*tc.wantScale)) {
				t.Errorf("CurrentSetCanaryScale() = %v; want %v", got, tc.wantScale)
			}
		})
	}
}

func TestPauseDuration(t *testing.T) {
	tests := map[string]struct {
		pause          *v1alpha1.RolloutPause
		want           time.Duration
		wantIndefinite bool
		wantErr        bool
	}{
		"a nil pause waits until promoted":              {pause: nil, wantIndefinite: true},
		"a pause without duration waits until promoted": {pause: &v1alpha1.RolloutPause{}, wantIndefinite: true},
		"an int is seconds":                             {pause: &v1alpha1.RolloutPause{Duration: count(10)}, want: 10 * time.Second},
		"zero seconds is no wait":                       {pause: &v1alpha1.RolloutPause{Duration: count(0)}, want: 0},
		"a numeric string is seconds":                   {pause: &v1alpha1.RolloutPause{Duration: percent("10")}, want: 10 * time.Second},
		"a Go duration in hours":                        {pause: &v1alpha1.RolloutPause{Duration: percent("1h")}, want: time.Hour},
		"a Go duration in seconds":                      {pause: &v1alpha1.RolloutPause{Duration: percent("30s")}, want: 30 * time.Second},
		"a compound Go duration":                        {pause: &v1alpha1.RolloutPause{Duration: percent("1m30s")}, want: 90 * time.Second},
		"fractions of a second are dropped":             {pause: &v1alpha1.RolloutPause{Duration: percent("1500ms")}, want: time.Second},
		"a string that is no duration is an error":      {pause: &v1alpha1.RolloutPause{Duration: percent("soon")}, wantErr: true},
		"a duration without a unit suffix is an error":  {pause: &v1alpha1.RolloutPause{Duration: percent("1.5")}, wantErr: true},
		"a negative int is an error":                    {pause: &v1alpha1.RolloutPause{Duration: count(-5)}, wantErr: true},
		"a negative duration is an error":               {pause: &v1alpha1.RolloutPause{Duration: percent("-1m")}, wantErr: true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, indefinite, err := PauseDuration(tc.pause)
			if (err != nil) != tc.wantErr {
				t.Fatalf("PauseDuration() error = %v; want error %v", err, tc.wantErr)
			}
			if got != tc.want || indefinite != tc.wantIndefinite {
				t.Errorf("PauseDuration() = %v, indefinite %v; want %v, indefinite %v", got, indefinite, tc.want, tc.wantIndefinite)
			}
		})
	}
}

// TestCanaryReplicasConvergesWithinFenceposts plays the controller: it applies
// the counts, lets pods become available, and repeats. Over many (replicas,
// weight, surge, unavailable) combinations it checks that no step exceeds
// spec.replicas+maxSurge pods, that no step leaves fewer than
// spec.replicas-maxUnavailable pods available, and that the end state is the
// closest split with both sides running for weights strictly between 0 and 100.
func TestCanaryReplicasConvergesWithinFenceposts(t *testing.T) {
	fenceposts := []*intstr.IntOrString{nil, count(0), count(1), count(2), count(5), percent("0%"), percent("10%"), percent("50%"), percent("100%")}
	replicaCounts := []int32{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 17, 100}
	weights := []int32{0, 1, 5, 10, 20, 25, 33, 40, 50, 60, 66, 75, 90, 99, 100}

	combos := 0
	for _, replicas := range replicaCounts {
		for _, weight := range weights {
			for _, maxSurge := range fenceposts {
				for _, maxUnavailable := range fenceposts {
					combos++
					surge, unavailable := CanaryFenceposts(maxSurge, maxUnavailable, replicas)
					name := fmt.Sprintf("replicas %d weight %d surge %s unavailable %s", replicas, weight, maxSurge, maxUnavailable)
					in := CanaryInput{Replicas: replicas, Weight: weight, MaxSurge: maxSurge, MaxUnavailable: maxUnavailable, Stable: rs(replicas, replicas)}

					playController(t, name, &in, surge, unavailable)
					wantCanary, wantStable := closestCanaryStableSplit(replicas, weight, surge)
					if in.Canary.Replicas != wantCanary || in.Stable.Replicas != wantStable {
						t.Errorf("%s: steady state %d/%d, want the closest split %d/%d", name, in.Canary.Replicas, in.Stable.Replicas, wantCanary, wantStable)
					}
					if weight > 0 && weight < 100 && replicas+surge >= 2 && (in.Canary.Replicas == 0 || in.Stable.Replicas == 0) {
						t.Errorf("%s: steady state %d/%d leaves a side at 0", name, in.Canary.Replicas, in.Stable.Replicas)
					}
					if weight == 0 && in.Canary.Replicas != 0 || weight == 100 && in.Stable.Replicas != 0 {
						t.Errorf("%s: steady state %d/%d should leave only one side", name, in.Canary.Replicas, in.Stable.Replicas)
					}

					// An abort from there returns to the stable within the same bounds.
					in.Aborted = true
					playController(t, name+" aborted", &in, surge, unavailable)
					if in.Canary.Replicas != 0 || in.Stable.Replicas != replicas {
						t.Errorf("%s: aborted steady state %d/%d, want 0/%d", name, in.Canary.Replicas, in.Stable.Replicas, replicas)
					}
				}
			}
		}
	}
	if combos < 10000 {
		t.Fatalf("only %d combinations checked", combos)
	}
}

// playController applies CanaryReplicas until the counts stop changing, with
// every pod becoming available right after each scaling. It fails the test when
// a step exceeds the surge, drops below the available minimum, or never settles.
func playController(t *testing.T, name string, in *CanaryInput, surge, unavailable int32) {
	t.Helper()
	maxRounds := 4*int(in.Replicas) + 20
	for round := 0; round < maxRounds; round++ {
		canary, stable := CanaryReplicas(*in)
		if canary < 0 || stable < 0 {
			t.Fatalf("%s: round %d: negative counts %d, %d", name, round, canary, stable)
		}
		if canary+stable > in.Replicas+surge {
			t.Fatalf("%s: round %d: %d canary + %d stable exceed %d replicas + %d surge", name, round, canary, stable, in.Replicas, surge)
		}
		var canaryAvailable int32
		if in.Canary != nil {
			canaryAvailable = in.Canary.AvailableReplicas
		}
		available := min(canaryAvailable, canary) + min(in.Stable.AvailableReplicas, stable)
		if available < in.Replicas-unavailable {
			t.Fatalf("%s: round %d: only %d pods stay available, want at least %d", name, round, available, in.Replicas-unavailable)
		}
		if in.Canary != nil && canary == in.Canary.Replicas && stable == in.Stable.Replicas {
			return
		}
		in.Canary, in.Stable = rs(canary, canary), rs(stable, stable)
	}
	t.Fatalf("%s: no steady state after %d rounds, last canary %v stable %v", name, maxRounds, in.Canary, in.Stable)
}
