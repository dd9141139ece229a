package rollout

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/skiffcd/skiff/api/v1alpha1"
)

func TestPlanProgressing(t *testing.T) {
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	previous := func(reason ConditionReason, message string, updatedAgo time.Duration) *v1alpha1.RolloutCondition {
		return &v1alpha1.RolloutCondition{Type: v1alpha1.RolloutProgressing, Reason: string(reason), Message: message,
			LastUpdateTime: metav1.NewTime(now.Add(-updatedAgo))}
	}
	updating := previous(ReasonReplicaSetUpdated, `ReplicaSet "demo-abc" is progressing.`, 0)
	progressing := Progress{Update: ProgressMade, Reason: ReasonReplicaSetUpdated, Message: `ReplicaSet "demo-abc" is progressing.`}
	timedOut := `ReplicaSet "demo-abc" has timed out progressing.`
	tests := map[string]struct {
		in   ProgressInput // with the new ReplicaSet demo-abc of revision 3, a 10 s deadline
		want Progress
	}{
		"an aborted update says so, naming the run that aborted it": {
			in:   ProgressInput{Previous: updating, Aborted: true, AbortMessage: "metric error-rate assessed Failed"},
			want: Progress{Update: ProgressSet, Status: corev1.ConditionFalse, Reason: ReasonRolloutAborted, Message: "Rollout aborted update to revision 3: metric error-rate assessed Failed"},
		},
		"later passes of an aborted update keep the message that named the run": {
			in:   ProgressInput{Previous: previous(ReasonRolloutAborted, "Rollout aborted update to revision 3: run failed", time.Minute), Aborted: true},
			want: Progress{Update: ProgressSet, Status: corev1.ConditionFalse, Reason: ReasonRolloutAborted, Message: "Rollout aborted update to revision 3: run failed"},
		},
		"an update aborted by hand says so plainly": {
			in:   ProgressInput{Previous: updating, Aborted: true},
			want: Progress{Update: ProgressSet, Status: corev1.ConditionFalse, Reason: ReasonRolloutAborted, Message: "Rollout aborted update to revision 3"},
		},
		"a complete update has progressed": {
			in:   ProgressInput{Previous: updating, Complete: true},
			want: Progress{Update: ProgressSet, Status: corev1.ConditionTrue, Reason: ReasonNewReplicaSetAvailable, Message: `ReplicaSet "demo-abc" has successfully progressed.`},
		},
		"a paused update is neither progressing nor stuck": {
			in:   ProgressInput{Previous: previous(ReasonReplicaSetUpdated, "", time.Hour), Paused: true},
			want: Progress{Update: ProgressSet, Status: corev1.ConditionUnknown, Reason: ReasonRolloutPaused, Message: "Rollout is paused"},
		},
		"the pass that creates the new ReplicaSet records progress": {
			in:   ProgressInput{Previous: previous(ReasonNewReplicaSetAvailable, "", time.Hour), Created: true},
			want: Progress{Update: ProgressMade, Reason: ReasonNewReplicaSetCreated, Message: `Created new replica set "demo-abc"`},
		},
		"without a new ReplicaSet (paused before it was made) the condition stays": {
			in:   ProgressInput{Previous: updating, NewReplicaSet: "-"},
			want: Progress{},
		},
		"the first pass of an update records progress": {
			in:   ProgressInput{},
			want: progressing,
		},
		"a pass that moved the rollout records progress": {
			in:   ProgressInput{Previous: previous(ReasonReplicaSetUpdated, "", time.Hour), MadeProgress: true},
			want: progressing,
		},
		"the first pass after a finished rollout starts a new wait": {
			in:   ProgressInput{Previous: previous(ReasonNewReplicaSetAvailable, "", time.Hour)},
			want: progressing,
		},
		"the first pass after a pause starts a new wait": {
			in:   ProgressInput{Previous: previous(ReasonRolloutPaused, "", time.Hour)},
			want: progressing,
		},
		"a rollout standing still looks again at its deadline": {
			in:   ProgressInput{Previous: previous(ReasonReplicaSetUpdated, "", 4*time.Second)},
			want: Progress{Requeue: true, RequeueAfter: 6 * time.Second},
		},
		"a rollout standing still past its deadline is degraded, with a warning": {
			in:   ProgressInput{Previous: previous(ReasonReplicaSetUpdated, "", 10*time.Second)},
			want: Progress{Update: ProgressSet, Status: corev1.ConditionFalse, Reason: ReasonProgressDeadlineExceeds, Message: timedOut, DeadlineExceeded: true},
		},
		"with progressDeadlineAbort the stuck update is aborted on the next pass": {
			in:   ProgressInput{Previous: previous(ReasonNewReplicaSetCreated, "", time.Minute), AbortOnDeadline: true},
			want: Progress{Update: ProgressSet, Status: corev1.ConditionFalse, Reason: ReasonProgressDeadlineExceeds, Message: timedOut, DeadlineExceeded: true, Abort: true, Requeue: true},
		},
		"a rollout that timed out stays so without a second warning": {
			in:   ProgressInput{Previous: previous(ReasonProgressDeadlineExceeds, timedOut, time.Hour)},
			want: Progress{},
		},
		"a rollout waiting on an analysis has no deadline": {
			in:   ProgressInput{Previous: previous(ReasonReplicaSetUpdated, "", time.Hour), AnalysisRunning: true},
			want: Progress{},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			in := tc.in
			in.Revision, in.DeadlineSeconds, in.Now = 3, 10, now
			switch in.NewReplicaSet {
			case "":
				in.NewReplicaSet = "demo-abc"
			case "-":
				in.NewReplicaSet = ""
			}
			if got := PlanProgressing(in); got != tc.want {
				t.Errorf("PlanProgressing =\n%+v, want\n%+v", got, tc.want)
			}
		})
	}
}

func TestMadeProgress(t *testing.T) {
	before := v1alpha1.RolloutStatus{Replicas: 4, UpdatedReplicas: 2, ReadyReplicas: 4, AvailableReplicas: 4,
		CurrentStepIndex: ptr[int32](1), CurrentPodHash: "new", StableRS: "old"}
	tests := map[string]struct {
		change func(*v1alpha1.RolloutStatus)
		want   bool
	}{
		"a pass that changed nothing made no progress":     {change: func(*v1alpha1.RolloutStatus) {}},
		"a new pod of the new revision is progress":        {change: func(s *v1alpha1.RolloutStatus) { s.UpdatedReplicas++ }, want: true},
		"a pod becoming available is progress":             {change: func(s *v1alpha1.RolloutStatus) { s.AvailableReplicas-- }, want: true},
		"a step completed is progress":                     {change: func(s *v1alpha1.RolloutStatus) { s.CurrentStepIndex = ptr[int32](2) }, want: true},
		"steps starting where there were none is progress": {change: func(s *v1alpha1.RolloutStatus) { s.CurrentStepIndex = nil }, want: true},
		"a new pod template is progress":                   {change: func(s *v1alpha1.RolloutStatus) { s.CurrentPodHash = "newer" }, want: true},
		"a new stable revision is progress":                {change: func(s *v1alpha1.RolloutStatus) { s.StableRS = "new" }, want: true},
		"a switch of the active Service is progress":       {change: func(s *v1alpha1.RolloutStatus) { s.BlueGreen.ActiveSelector = "new" }, want: true},
		"a pause alone is no progress":                     {change: func(s *v1alpha1.RolloutStatus) { s.ControllerPause = true }},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			after := *before.DeepCopy()
			tc.change(&after)
			if got := MadeProgress(&before, &after); got != tc.want {
				t.Errorf("MadeProgress = %v, want %v", got, tc.want)
			}
		})
	}
}
