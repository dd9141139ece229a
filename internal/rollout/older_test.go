package rollout

import (
	"fmt"
	"testing"
	"time"
)

// The expected decisions follow Argo Rollouts' scaleDownOldReplicaSetsForCanary
// and cleanupUnhealthyReplicas (rollout/canary.go, rollout/replicaset.go).
func TestScaleDownOlder(t *testing.T) {
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	older := func(replicas, unavailable int32) OlderReplicaSet {
		return OlderReplicaSet{Replicas: replicas, Unavailable: unavailable}
	}
	withDeadline := func(o OlderReplicaSet, d time.Time) OlderReplicaSet { o.ScaleDownDeadline = d; return o }
	referenced := func(o OlderReplicaSet) OlderReplicaSet { o.Referenced = true; return o }
	tests := map[string]struct {
		in   OlderInput
		want []OlderScale
	}{
		// 10 replicas, maxUnavailable 25% = 2: 8 pods must stay available.
		"without a router older pods go only as far as maxUnavailable allows": {
			in:   OlderInput{Replicas: 10, Available: 9, Older: []OlderReplicaSet{older(4, 0)}},
			want: []OlderScale{{Replicas: 3}},
		},
		"without a router older pods go at once when enough pods are available elsewhere": {
			in:   OlderInput{Replicas: 10, Available: 14, Older: []OlderReplicaSet{older(4, 0)}},
			want: []OlderScale{{Replicas: 0}},
		},
		"the newest older ReplicaSet goes first": {
			in:   OlderInput{Replicas: 10, Available: 12, Older: []OlderReplicaSet{older(3, 0), older(3, 0)}},
			want: []OlderScale{{Replicas: 0}, {Replicas: 2}},
		},
		"nothing available goes while the budget is spent": {
			in:   OlderInput{Replicas: 10, Available: 8, Older: []OlderReplicaSet{older(4, 0)}},
			want: []OlderScale{{Replicas: 4}},
		},
		"unavailable pods go at once, budget or not": {
			in:   OlderInput{Replicas: 10, Available: 8, Older: []OlderReplicaSet{older(5, 2)}},
			want: []OlderScale{{Replicas: 3}},
		},
		"maxUnavailable 0 and maxSurge 0 still let one pod go": {
			in:   OlderInput{Replicas: 4, MaxSurge: count(0), MaxUnavailable: count(0), Available: 4, Older: []OlderReplicaSet{older(2, 0)}},
			want: []OlderScale{{Replicas: 1}},
		},
		"an older ReplicaSet at 0 stays at 0": {
			in:   OlderInput{Replicas: 10, Available: 10, Older: []OlderReplicaSet{older(0, 0)}},
			want: []OlderScale{{Replicas: 0}},
		},
		"with a router an abandoned revision goes to 0 at once": {
			in:   OlderInput{Replicas: 10, TrafficRouted: true, Available: 9, Older: []OlderReplicaSet{older(5, 0)}},
			want: []OlderScale{{Replicas: 0}},
		},
		"with a router nothing goes while the budget is spent": {
			in:   OlderInput{Replicas: 10, TrafficRouted: true, Available: 8, Older: []OlderReplicaSet{older(5, 0)}},
			want: []OlderScale{{Replicas: 5}},
		},
		"with a router a ReplicaSet still getting traffic is left alone": {
			in:   OlderInput{Replicas: 10, TrafficRouted: true, Available: 20, Older: []OlderReplicaSet{referenced(older(5, 0))}},
			want: []OlderScale{{Replicas: 5}},
		},
		"after a promotion the previous stable waits scaleDownDelaySeconds": {
			in: OlderInput{Replicas: 10, TrafficRouted: true, FullyPromoted: true, Available: 20, ScaleDownDelay: 30 * time.Second, Now: now,
				Older: []OlderReplicaSet{older(10, 0)}},
			want: []OlderScale{{Replicas: 10, Deadline: now.Add(30 * time.Second)}},
		},
		"the previous stable stays up until its deadline": {
			in: OlderInput{Replicas: 10, TrafficRouted: true, FullyPromoted: true, Available: 20, ScaleDownDelay: 30 * time.Second, Now: now,
				Older: []OlderReplicaSet{withDeadline(older(10, 0), now.Add(time.Second))}},
			want: []OlderScale{{Replicas: 10}},
		},
		"the previous stable goes at its deadline": {
			in: OlderInput{Replicas: 10, TrafficRouted: true, FullyPromoted: true, Available: 20, ScaleDownDelay: 30 * time.Second, Now: now,
				Older: []OlderReplicaSet{withDeadline(older(10, 0), now)}},
			want: []OlderScale{{Replicas: 0}},
		},
		"with dynamicStableScale the previous stable goes at once": {
			in: OlderInput{Replicas: 10, TrafficRouted: true, DynamicStableScale: true, FullyPromoted: true, Available: 12, ScaleDownDelay: 30 * time.Second, Now: now,
				Older: []OlderReplicaSet{older(2, 0)}},
			want: []OlderScale{{Replicas: 0}},
		},
		"scaleDownDelayRevisionLimit bounds the ReplicaSets that wait": {
			in: OlderInput{Replicas: 10, TrafficRouted: true, FullyPromoted: true, Available: 30, ScaleDownDelay: 30 * time.Second, RevisionLimit: ptr(int32(1)), Now: now,
				Older: []OlderReplicaSet{older(10, 0), older(10, 0)}},
			want: []OlderScale{{Replicas: 10, Deadline: now.Add(30 * time.Second)}, {Replicas: 0}},
		},
		"beyond scaleDownDelayRevisionLimit a waiting ReplicaSet goes before its deadline": {
			in: OlderInput{Replicas: 10, TrafficRouted: true, FullyPromoted: true, Available: 30, ScaleDownDelay: 30 * time.Second, RevisionLimit: ptr(int32(1)), Now: now,
				Older: []OlderReplicaSet{withDeadline(older(10, 0), now.Add(time.Minute)), withDeadline(older(10, 0), now.Add(time.Minute))}},
			want: []OlderScale{{Replicas: 10}, {Replicas: 0}},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got := ScaleDownOlder(tc.in)
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Errorf("ScaleDownOlder =\n %v\nwant\n %v", got, tc.want)
			}
		})
	}
}

// Pass after pass an older revision without a router drains within
// maxUnavailable while the replacement pods come up, never all at once.
func TestScaleDownOlderDrainsStepByStep(t *testing.T) {
	in := OlderInput{Replicas: 8, Older: []OlderReplicaSet{{Replicas: 8}}}
	var steps []int32
	// The new revision's available pods: it replaces each pod that went,
	// plus maxSurge (2), a pass later.
	stable := int32(0)
	for pass := 0; pass < 10 && in.Older[0].Replicas > 0; pass++ {
		in.Available = in.Older[0].Replicas + stable
		got := ScaleDownOlder(in)[0].Replicas
		if in.Available-(in.Older[0].Replicas-got) < 6 {
			t.Fatalf("pass %d: scaling %d to %d leaves fewer than 6 of 8 pods available", pass, in.Older[0].Replicas, got)
		}
		steps = append(steps, got)
		stable = min(8, stable+(in.Older[0].Replicas-got)+2)
		in.Older[0].Replicas = got
	}
	if want := "[6 2 0]"; fmt.Sprint(steps) != want {
		t.Errorf("older revision by pass: %v, want %v", steps, want)
	}
}
