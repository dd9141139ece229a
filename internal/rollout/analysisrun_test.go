package rollout

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/skiffcd/skiff/api/v1alpha1"
)

func TestRunName(t *testing.T) {
	tests := map[string]struct {
		runType RunType
		step    int32
		want    string
	}{
		"a background run has no suffix":      {runType: RunTypeBackground, want: "web-6bcfbc585f-2"},
		"a step run ends with its step index": {runType: RunTypeStep, step: 3, want: "web-6bcfbc585f-2-3"},
		"a pre-promotion run ends with pre":   {runType: RunTypePrePromotion, want: "web-6bcfbc585f-2-pre"},
		"a post-promotion run ends with post": {runType: RunTypePostPromotion, want: "web-6bcfbc585f-2-post"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := RunName("web", "6bcfbc585f", 2, tc.runType, tc.step); got != tc.want {
				t.Errorf("RunName = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestRunLabels(t *testing.T) {
	tests := map[string]struct {
		runType  RunType
		extra    map[string]string
		selector map[string]string
		want     map[string]string
	}{
		"a post-promotion run carries the hash, the type and the selector": {
			runType: RunTypePostPromotion, selector: map[string]string{"app": "web"},
			want: map[string]string{PodTemplateHashLabel: "abc", RunTypeLabel: "PostPromotion", "app": "web"},
		},
		"a step run carries its step index": {
			runType: RunTypeStep,
			want:    map[string]string{PodTemplateHashLabel: "abc", RunTypeLabel: "Step", RunStepIndexLabel: "1"},
		},
		"analysisRunMetadata labels are added": {
			runType: RunTypeBackground, extra: map[string]string{"team": "a"},
			want: map[string]string{PodTemplateHashLabel: "abc", RunTypeLabel: "Background", "team": "a"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got := RunLabels("abc", tc.runType, 1, tc.extra, tc.selector)
			if len(got) != len(tc.want) {
				t.Fatalf("labels %v, want %v", got, tc.want)
			}
			for k, v := range tc.want {
				if got[k] != v {
					t.Errorf("label %s = %q, want %q", k, got[k], v)
				}
			}
		})
	}
}

func TestRunArgs(t *testing.T) {
	ro := &v1alpha1.Rollout{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "shop", Labels: map[string]string{"team": "a"}}}
	tests := map[string]struct {
		arg     v1alpha1.AnalysisRunArgument
		want    string
		wantErr string
	}{
		"a plain value passes": {
			arg: v1alpha1.AnalysisRunArgument{Name: "x", Value: v1alpha1.NewAnyString("web-canary")}, want: "web-canary",
		},
		"Stable is the stable revision's hash": {
			arg: v1alpha1.AnalysisRunArgument{Name: "x", ValueFrom: &v1alpha1.ArgumentValueFrom{PodTemplateHashValue: ptr("Stable")}}, want: "old",
		},
		"Latest is the new revision's hash": {
			arg: v1alpha1.AnalysisRunArgument{Name: "x", ValueFrom: &v1alpha1.ArgumentValueFrom{PodTemplateHashValue: ptr("Latest")}}, want: "new",
		},
		"a fieldRef reads the Rollout": {
			arg: v1alpha1.AnalysisRunArgument{Name: "x", ValueFrom: &v1alpha1.ArgumentValueFrom{FieldRef: &v1alpha1.FieldRef{FieldPath: "metadata.labels['team']"}}}, want: "a",
		},
		"an unknown podTemplateHashValue is an error": {
			arg:     v1alpha1.AnalysisRunArgument{Name: "x", ValueFrom: &v1alpha1.ArgumentValueFrom{PodTemplateHashValue: ptr("Oldest")}},
			wantErr: `args.x.valueFrom.podTemplateHashValue: Invalid value: "Oldest"`,
		},
		"a fieldRef to a missing label is an error": {
			arg:     v1alpha1.AnalysisRunArgument{Name: "x", ValueFrom: &v1alpha1.ArgumentValueFrom{FieldRef: &v1alpha1.FieldRef{FieldPath: "metadata.labels['nope']"}}},
			wantErr: "args.x: fieldRef",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := RunArgs([]v1alpha1.AnalysisRunArgument{tc.arg}, "old", "new", ro)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != 1 || got[0].Value == nil || got[0].Value.String() != tc.want {
				t.Fatalf("args %+v, want x=%q", got, tc.want)
			}
		})
	}
}

func TestNeedsNewRun(t *testing.T) {
	run := func(phase v1alpha1.AnalysisPhase) *v1alpha1.AnalysisRun {
		return &v1alpha1.AnalysisRun{Status: v1alpha1.AnalysisRunStatus{Phase: phase}}
	}
	pausedFor := func(reason v1alpha1.PauseReason) v1alpha1.RolloutStatus {
		return v1alpha1.RolloutStatus{ControllerPause: true, PauseConditions: []v1alpha1.PauseCondition{{Reason: reason}}}
	}
	promoted := v1alpha1.RolloutStatus{ControllerPause: true}
	tests := map[string]struct {
		current *v1alpha1.AnalysisRun
		status  v1alpha1.RolloutStatus
		want    bool
	}{
		"no run yet needs one":                    {want: true},
		"a running run is kept":                   {current: run(v1alpha1.AnalysisPhaseRunning)},
		"a failed run is kept":                    {current: run(v1alpha1.AnalysisPhaseFailed), status: promoted},
		"an inconclusive run first pauses":        {current: run(v1alpha1.AnalysisPhaseInconclusive)},
		"an inconclusive run keeps its pause":     {current: run(v1alpha1.AnalysisPhaseInconclusive), status: pausedFor(v1alpha1.PauseReasonInconclusiveAnalysis)},
		"a blue-green pause is not its promote":   {current: run(v1alpha1.AnalysisPhaseInconclusive), status: pausedFor(v1alpha1.PauseReasonBlueGreenPause)},
		"promoting an inconclusive run reruns it": {current: run(v1alpha1.AnalysisPhaseInconclusive), status: promoted, want: true},
		"a successful run is kept after promote":  {current: run(v1alpha1.AnalysisPhaseSuccessful), status: promoted},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := NeedsNewRun(tc.current, &tc.status); got != tc.want {
				t.Errorf("NeedsNewRun = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestRunsToDelete(t *testing.T) {
	base := time.Date(2026, 12, 4, 0, 0, 0, 0, time.UTC)
	run := func(name string, age int, phase v1alpha1.AnalysisPhase) *v1alpha1.AnalysisRun {
		return &v1alpha1.AnalysisRun{
			ObjectMeta: metav1.ObjectMeta{Name: name, CreationTimestamp: metav1.NewTime(base.Add(-time.Duration(age) * time.Minute))},
			Status:     v1alpha1.AnalysisRunStatus{Phase: phase},
		}
	}
	tests := map[string]struct {
		runs []*v1alpha1.AnalysisRun
		want []string
	}{
		"within the limits nothing goes": {
			runs: []*v1alpha1.AnalysisRun{run("a", 1, v1alpha1.AnalysisPhaseSuccessful), run("b", 2, v1alpha1.AnalysisPhaseFailed)},
		},
		"the oldest successful runs beyond the limit go": {
			runs: []*v1alpha1.AnalysisRun{
				run("s1", 1, v1alpha1.AnalysisPhaseSuccessful), run("s3", 3, v1alpha1.AnalysisPhaseSuccessful),
				run("s2", 2, v1alpha1.AnalysisPhaseSuccessful), run("f1", 4, v1alpha1.AnalysisPhaseFailed),
			},
			want: []string{"s3"},
		},
		"failed, error and inconclusive runs count together": {
			runs: []*v1alpha1.AnalysisRun{
				run("f1", 1, v1alpha1.AnalysisPhaseFailed), run("e1", 2, v1alpha1.AnalysisPhaseError),
				run("i1", 3, v1alpha1.AnalysisPhaseInconclusive),
			},
			want: []string{"i1"},
		},
		"running runs are never deleted": {
			runs: []*v1alpha1.AnalysisRun{
				run("r1", 9, v1alpha1.AnalysisPhaseRunning), run("s1", 1, v1alpha1.AnalysisPhaseSuccessful),
				run("s2", 2, v1alpha1.AnalysisPhaseSuccessful), run("s3", 3, v1alpha1.AnalysisPhaseSuccessful),
			},
			want: []string{"s3"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			var got []string
			for _, r := range RunsToDelete(tc.runs, 2, 2) {
				got = append(got, r.Name)
			}
			if strings.Join(got, ",") != strings.Join(tc.want, ",") {
				t.Errorf("deleted %v, want %v", got, tc.want)
			}
		})
	}
}

func TestBeforeStartingStep(t *testing.T) {
	tests := map[string]struct {
		startingStep *int32
		current      *int32
		want         bool
	}{
		"without a starting step the analysis starts at once": {current: ptr[int32](0)},
		"before the starting step it waits":                   {startingStep: ptr[int32](2), current: ptr[int32](1), want: true},
		"at the starting step it runs":                        {startingStep: ptr[int32](2), current: ptr[int32](2)},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			canary := &v1alpha1.CanaryStrategy{Analysis: &v1alpha1.RolloutAnalysisBackground{StartingStep: tc.startingStep}}
			if got := BeforeStartingStep(canary, tc.current); got != tc.want {
				t.Errorf("BeforeStartingStep = %v, want %v", got, tc.want)
			}
		})
	}
}
