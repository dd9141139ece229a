package rollout

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/skiffcd/skiff/api/v1alpha1"
)

// The expected steps follow Argo Rollouts' blue-green reconciler
// (rollout/bluegreen.go, rollout/service.go): a 2-replica Rollout whose
// active Service selects the old revision, updated to the new one.
func TestPlanBlueGreen(t *testing.T) {
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	manual := func(bg *v1alpha1.BlueGreenStrategy) { bg.AutoPromotionEnabled = ptr(false) }
	autoAfter := func(seconds int32) func(*v1alpha1.BlueGreenStrategy) {
		return func(bg *v1alpha1.BlueGreenStrategy) { bg.AutoPromotionSeconds = seconds }
	}
	paused := func(ago time.Duration) func(*v1alpha1.RolloutStatus) {
		return func(st *v1alpha1.RolloutStatus) {
			st.PauseConditions = []v1alpha1.PauseCondition{{Reason: v1alpha1.PauseReasonBlueGreenPause, StartTime: metav1.NewTime(now.Add(-ago))}}
			st.ControllerPause = true
		}
	}
	tests := map[string]struct {
		strategy func(*v1alpha1.BlueGreenStrategy)
		status   func(*v1alpha1.RolloutStatus)
		// in changes the input of an update from the old revision, active
		// and stable, to the new one, whose ReplicaSet runs 2 pods, all available.
		in   func(*BlueGreenInput)
		want BlueGreenStep
	}{
		"the first revision goes live as soon as its pods are available, without a pause": {
			strategy: manual,
			in: func(in *BlueGreenInput) {
				in.ActiveHash, in.ActiveOurs, in.Status.StableRS = "", false, ""
			},
			want: BlueGreenStep{NewReplicas: 2, Switch: true, ActiveSelector: "new", MarkStable: true},
		},
		"a revision after a selector none of ours matches goes live without a pause": {
			strategy: manual,
			in:       func(in *BlueGreenInput) { in.ActiveHash, in.ActiveOurs = "foreign", false },
			want:     BlueGreenStep{NewReplicas: 2, Switch: true, ActiveSelector: "new", MarkStable: true},
		},
		"a new revision switches once its pods are all available, the old one going down 30 s later": {
			want: BlueGreenStep{NewReplicas: 2, Switch: true, OldActiveDeadline: now.Add(30 * time.Second), ActiveSelector: "new", MarkStable: true},
		},
		"scaleDownDelaySeconds says when the old revision goes down": {
			strategy: func(bg *v1alpha1.BlueGreenStrategy) { bg.ScaleDownDelaySeconds = ptr[int32](4) },
			want:     BlueGreenStep{NewReplicas: 2, Switch: true, OldActiveDeadline: now.Add(4 * time.Second), ActiveSelector: "new", MarkStable: true},
		},
		"a new revision with a pod not yet available waits": {
			in:   func(in *BlueGreenInput) { in.New.AvailableReplicas = 1 },
			want: BlueGreenStep{NewReplicas: 2, ActiveSelector: "old"},
		},
		"a new revision scaled in this pass switches only once its ReplicaSet has seen the scale": {
			in:   func(in *BlueGreenInput) { in.New = ReplicaSetCounts{Replicas: 1, AvailableReplicas: 1} },
			want: BlueGreenStep{NewReplicas: 2, ActiveSelector: "old"},
		},
		"a change of minReadySeconds holds the switch for a pass, as any scale does": {
			in:   func(in *BlueGreenInput) { in.MinReadySecondsChanged = true },
			want: BlueGreenStep{NewReplicas: 2, ActiveSelector: "old"},
		},
		"a rollout paused by spec.paused does not switch": {
			in:   func(in *BlueGreenInput) { in.Paused = true },
			want: BlueGreenStep{NewReplicas: 2, ActiveSelector: "old"},
		},
		"a prePromotionAnalysis not yet passed holds the switch at the preview size": {
			strategy: func(bg *v1alpha1.BlueGreenStrategy) { bg.PreviewReplicaCount = ptr[int32](1) },
			in: func(in *BlueGreenInput) {
				in.PrePromotionBlocked, in.New = true, ReplicaSetCounts{Replicas: 1, AvailableReplicas: 1}
			},
			want: BlueGreenStep{NewReplicas: 1, ActiveSelector: "old"},
		},
		"a postPromotionAnalysis not yet passed switches but keeps the old revision stable": {
			in:   func(in *BlueGreenInput) { in.PostPromotionPending = true },
			want: BlueGreenStep{NewReplicas: 2, Switch: true, OldActiveDeadline: now.Add(30 * time.Second), ActiveSelector: "new"},
		},
		"an active new revision at full size becomes stable without another switch": {
			in:   func(in *BlueGreenInput) { in.ActiveHash = "new" },
			want: BlueGreenStep{NewReplicas: 2, ActiveSelector: "new", MarkStable: true},
		},
		"a stable active revision stays as it is": {
			in:   func(in *BlueGreenInput) { in.ActiveHash, in.Status.StableRS = "new", "new" },
			want: BlueGreenStep{NewReplicas: 2, ActiveSelector: "new"},
		},
		"a rollback within the rollbackWindow goes live without a pause": {
			strategy: manual,
			in:       func(in *BlueGreenInput) { in.RollbackWithinWindow = true },
			want:     BlueGreenStep{NewReplicas: 2, Switch: true, OldActiveDeadline: now.Add(30 * time.Second), ActiveSelector: "new", MarkStable: true},
		},
		"without auto-promotion the rollout pauses once the preview pods are all available": {
			strategy: manual,
			want:     BlueGreenStep{Pause: PauseAdded, NewReplicas: 2, ActiveSelector: "old"},
		},
		"without auto-promotion the preview runs previewReplicaCount pods": {
			strategy: func(bg *v1alpha1.BlueGreenStrategy) { manual(bg); bg.PreviewReplicaCount = ptr[int32](1) },
			in:       func(in *BlueGreenInput) { in.New = ReplicaSetCounts{Replicas: 1, AvailableReplicas: 1} },
			want:     BlueGreenStep{Pause: PauseAdded, NewReplicas: 1, ActiveSelector: "old"},
		},
		"previewReplicaCount above spec.replicas runs spec.replicas": {
			strategy: func(bg *v1alpha1.BlueGreenStrategy) { manual(bg); bg.PreviewReplicaCount = ptr[int32](5) },
			want:     BlueGreenStep{Pause: PauseAdded, NewReplicas: 2, ActiveSelector: "old"},
		},
		"without auto-promotion nothing pauses before the preview pods are all available": {
			strategy: manual,
			in:       func(in *BlueGreenInput) { in.New.AvailableReplicas = 1 },
			want:     BlueGreenStep{NewReplicas: 2, ActiveSelector: "old"},
		},
		"a rollout paused by spec.paused gets no BlueGreenPause": {
			strategy: manual,
			in:       func(in *BlueGreenInput) { in.Paused = true },
			want:     BlueGreenStep{NewReplicas: 2, ActiveSelector: "old"},
		},
		"without auto-promotion the pause holds until a promote": {
			strategy: manual, status: paused(time.Hour),
			want: BlueGreenStep{NewReplicas: 2, ActiveSelector: "old"},
		},
		"a promote, which clears the pause this controller set, switches": {
			strategy: manual, status: func(st *v1alpha1.RolloutStatus) { st.ControllerPause = true },
			want: BlueGreenStep{NewReplicas: 2, Switch: true, OldActiveDeadline: now.Add(30 * time.Second), ActiveSelector: "new", MarkStable: true},
		},
		"a promote --full ends the pause and switches": {
			strategy: manual, status: func(st *v1alpha1.RolloutStatus) { paused(time.Second)(st); st.PromoteFull = true },
			want: BlueGreenStep{Pause: PauseRemoved, NewReplicas: 2, Switch: true, OldActiveDeadline: now.Add(30 * time.Second), ActiveSelector: "new", MarkStable: true},
		},
		"a promote still waits for a prePromotionAnalysis to pass": {
			strategy: func(bg *v1alpha1.BlueGreenStrategy) { manual(bg); bg.PreviewReplicaCount = ptr[int32](1) },
			status:   func(st *v1alpha1.RolloutStatus) { st.ControllerPause = true },
			in: func(in *BlueGreenInput) {
				in.PrePromotionBlocked, in.New = true, ReplicaSetCounts{Replicas: 1, AvailableReplicas: 1}
			},
			want: BlueGreenStep{NewReplicas: 1, ActiveSelector: "old"},
		},
		"with autoPromotionSeconds the rollout pauses and looks again when they have passed": {
			strategy: autoAfter(10),
			want:     BlueGreenStep{Pause: PauseAdded, NewReplicas: 2, ActiveSelector: "old", Requeue: true, RequeueAfter: 10 * time.Second},
		},
		"before autoPromotionSeconds have passed the pause holds": {
			strategy: autoAfter(10), status: paused(4 * time.Second),
			want: BlueGreenStep{NewReplicas: 2, ActiveSelector: "old", Requeue: true, RequeueAfter: 6 * time.Second},
		},
		"once autoPromotionSeconds have passed the rollout resumes and switches": {
			strategy: autoAfter(10), status: paused(10 * time.Second),
			want: BlueGreenStep{Pause: PauseRemoved, Resumed: true, NewReplicas: 2, Switch: true, OldActiveDeadline: now.Add(30 * time.Second), ActiveSelector: "new", MarkStable: true},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			bg := &v1alpha1.BlueGreenStrategy{ActiveService: "active"}
			if tc.strategy != nil {
				tc.strategy(bg)
			}
			st := &v1alpha1.RolloutStatus{StableRS: "old", CurrentPodHash: "new"}
			if tc.status != nil {
				tc.status(st)
			}
			in := BlueGreenInput{
				Strategy: bg, Replicas: 2, Status: st, Hash: "new", ActiveHash: "old", ActiveOurs: true,
				New: ReplicaSetCounts{Replicas: 2, AvailableReplicas: 2}, Now: now,
			}
			if tc.in != nil {
				tc.in(&in)
			}
			if got := PlanBlueGreen(in); got != tc.want {
				t.Errorf("PlanBlueGreen =\n%+v, want\n%+v", got, tc.want)
			}
		})
	}
}

func TestBlueGreenScaleDown(t *testing.T) {
	old := func(hash string, replicas int32, deadline bool) BlueGreenReplicaSet {
		return BlueGreenReplicaSet{Hash: hash, Replicas: replicas, HasDeadline: deadline}
	}
	newRS := BlueGreenReplicaSet{Hash: "new", Replicas: 2, New: true}
	tests := map[string]struct {
		replicaSets    []BlueGreenReplicaSet // oldest first
		active, stable string
		limit          *int32
		want           []BlueGreenScale
	}{
		"before the switch the active revision stays up and the new one is the step's": {
			replicaSets: []BlueGreenReplicaSet{old("a", 2, false), newRS}, active: "a", stable: "a",
			want: []BlueGreenScale{KeepActive, LeaveToStep},
		},
		"after the switch the revision switched from waits for its deadline": {
			replicaSets: []BlueGreenReplicaSet{old("a", 2, true), newRS}, active: "new", stable: "new",
			want: []BlueGreenScale{ScaleDownAtDeadline, LeaveToStep},
		},
		"the old stable revision stays up while a postPromotionAnalysis runs": {
			replicaSets: []BlueGreenReplicaSet{old("a", 2, true), newRS}, active: "new", stable: "a",
			want: []BlueGreenScale{KeepStable, LeaveToStep},
		},
		"an abandoned revision without a deadline goes at once": {
			replicaSets: []BlueGreenReplicaSet{old("a", 2, false), old("b", 2, false), newRS}, active: "a", stable: "a",
			want: []BlueGreenScale{KeepActive, ScaleDown, LeaveToStep},
		},
		"without scaleDownDelayRevisionLimit every waiting revision waits": {
			replicaSets: []BlueGreenReplicaSet{old("a", 2, true), old("b", 2, true), old("c", 2, true), newRS}, active: "new", stable: "new",
			want: []BlueGreenScale{ScaleDownAtDeadline, ScaleDownAtDeadline, ScaleDownAtDeadline, LeaveToStep},
		},
		"scaleDownDelayRevisionLimit keeps the newest waiting revisions up and takes the older down at once": {
			replicaSets: []BlueGreenReplicaSet{old("a", 2, true), old("b", 2, true), old("c", 2, true), newRS}, active: "new", stable: "new", limit: ptr[int32](1),
			want: []BlueGreenScale{ScaleDownBeyondLimit, ScaleDownBeyondLimit, ScaleDownAtDeadline, LeaveToStep},
		},
		"a waiting revision already at 0 does not count toward the limit": {
			replicaSets: []BlueGreenReplicaSet{old("a", 2, true), old("b", 0, true), newRS}, active: "new", stable: "new", limit: ptr[int32](1),
			want: []BlueGreenScale{ScaleDownAtDeadline, ScaleDownAtDeadline, LeaveToStep},
		},
		"a limit of 0 takes every waiting revision down at once": {
			replicaSets: []BlueGreenReplicaSet{old("a", 2, true), newRS}, active: "new", stable: "new", limit: ptr[int32](0),
			want: []BlueGreenScale{ScaleDownBeyondLimit, LeaveToStep},
		},
		"the active revision keeps its pods even with a deadline, which goes": {
			replicaSets: []BlueGreenReplicaSet{old("a", 2, true), newRS}, active: "a", stable: "a", limit: ptr[int32](0),
			want: []BlueGreenScale{KeepActive, LeaveToStep},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got := BlueGreenScaleDown(tc.replicaSets, tc.active, tc.stable, tc.limit)
			if len(got) != len(tc.want) {
				t.Fatalf("BlueGreenScaleDown = %v, want %v", got, tc.want)
			}
			for i := range got {
				if got[i] != tc.want[i] {
					t.Errorf("BlueGreenScaleDown = %v, want %v", got, tc.want)
					break
				}
			}
		})
	}
}
