package analysis

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/skiffcd/skiff/api/v1alpha1"
)

func TestNextStep(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(d time.Duration) *metav1.Time { t := metav1.NewTime(start.Add(d)); return &t }
	finished := func(phase v1alpha1.AnalysisPhase, d time.Duration) *v1alpha1.MetricResult {
		return &v1alpha1.MetricResult{Measurements: []v1alpha1.Measurement{{Phase: phase, StartedAt: at(d), FinishedAt: at(d)}}}
	}
	tests := map[string]struct {
		metric      v1alpha1.Metric
		result      *v1alpha1.MetricResult
		now         time.Duration
		terminating bool
		want        Step
		wantErr     bool
	}{
		"a new metric is measured at once": {
			want: Step{Action: Measure},
		},
		"a new metric waits for its initialDelay": {
			metric: v1alpha1.Metric{InitialDelay: "30s"}, now: 10 * time.Second,
			want: Step{Action: Wait, After: 20 * time.Second},
		},
		"a new metric is measured once its initialDelay passed": {
			metric: v1alpha1.Metric{InitialDelay: "30s"}, now: 30 * time.Second,
			want: Step{Action: Measure},
		},
		"a measured metric waits for its interval": {
			metric: v1alpha1.Metric{Interval: "1m"}, result: finished(v1alpha1.AnalysisPhaseSuccessful, 0), now: 15 * time.Second,
			want: Step{Action: Wait, After: 45 * time.Second},
		},
		"a measured metric is measured again after its interval": {
			metric: v1alpha1.Metric{Interval: "1m"}, result: finished(v1alpha1.AnalysisPhaseSuccessful, 0), now: time.Minute,
			want: Step{Action: Measure},
		},
		"an error is retried after the error retry interval when the interval is longer": {
			metric: v1alpha1.Metric{Interval: "5m"}, result: finished(v1alpha1.AnalysisPhaseError, 0), now: 2 * time.Second,
			want: Step{Action: Wait, After: 8 * time.Second},
		},
		"an error is retried after the interval when it is shorter": {
			metric: v1alpha1.Metric{Interval: "3s"}, result: finished(v1alpha1.AnalysisPhaseError, 0), now: 2 * time.Second,
			want: Step{Action: Wait, After: time.Second},
		},
		"an error of a metric without interval is retried": {
			result: finished(v1alpha1.AnalysisPhaseError, 0), now: 10 * time.Second,
			want: Step{Action: Measure},
		},
		"an in-flight measurement is resumed": {
			result: &v1alpha1.MetricResult{Measurements: []v1alpha1.Measurement{{Phase: v1alpha1.AnalysisPhaseRunning, StartedAt: at(0)}}},
			want:   Step{Action: Resume},
		},
		"an in-flight measurement waits for its resumeAt": {
			result: &v1alpha1.MetricResult{Measurements: []v1alpha1.Measurement{{Phase: v1alpha1.AnalysisPhaseRunning, StartedAt: at(0), ResumeAt: at(5 * time.Second)}}},
			now:    time.Second, want: Step{Action: Wait, After: 4 * time.Second},
		},
		"an in-flight measurement is resumed even when terminating, to stop it": {
			result:      &v1alpha1.MetricResult{Measurements: []v1alpha1.Measurement{{Phase: v1alpha1.AnalysisPhaseRunning, StartedAt: at(0)}}},
			terminating: true, want: Step{Action: Resume},
		},
		"a terminating run takes no new measurement": {
			metric: v1alpha1.Metric{Interval: "1m"}, result: finished(v1alpha1.AnalysisPhaseSuccessful, 0), now: time.Hour,
			terminating: true, want: Step{},
		},
		"a completed metric needs nothing": {
			result: &v1alpha1.MetricResult{Phase: v1alpha1.AnalysisPhaseSuccessful}, want: Step{},
		},
		"an interval that is not a duration is an error": {
			metric: v1alpha1.Metric{Interval: "often"}, result: finished(v1alpha1.AnalysisPhaseSuccessful, 0), wantErr: true,
		},
		"an initialDelay that is not a duration is an error": {
			metric: v1alpha1.Metric{InitialDelay: "soon"}, wantErr: true,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := NextStep(tc.metric, tc.result, start, start.Add(tc.now), tc.terminating, 0)
			if (err != nil) != tc.wantErr {
				t.Fatalf("error = %v, wantErr %v", err, tc.wantErr)
			}
			if got != tc.want {
				t.Errorf("NextStep = %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestRecord(t *testing.T) {
	r := v1alpha1.MetricResult{}
	Record(&r, v1alpha1.Measurement{Phase: v1alpha1.AnalysisPhaseRunning}, false)
	if r.Count != 0 || len(r.Measurements) != 1 {
		t.Fatalf("an in-flight measurement was counted: %+v", r)
	}
	Record(&r, v1alpha1.Measurement{Phase: v1alpha1.AnalysisPhaseSuccessful}, true)
	if r.Count != 1 || r.Successful != 1 || len(r.Measurements) != 1 || r.ConsecutiveSuccess != 1 {
		t.Fatalf("resuming did not replace and count the measurement: %+v", r)
	}
	Record(&r, v1alpha1.Measurement{Phase: v1alpha1.AnalysisPhaseError}, false)
	Record(&r, v1alpha1.Measurement{Phase: v1alpha1.AnalysisPhaseError}, false)
	if r.Count != 1 || r.Error != 2 || r.ConsecutiveError != 2 || r.ConsecutiveSuccess != 0 {
		t.Fatalf("errors were counted wrongly: %+v", r)
	}
	Record(&r, v1alpha1.Measurement{Phase: v1alpha1.AnalysisPhaseFailed}, false)
	if r.Count != 2 || r.Failed != 1 || r.ConsecutiveError != 0 {
		t.Fatalf("a failure did not reset the consecutive errors: %+v", r)
	}
}
