package analysis

import (
	"testing"

	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/skiffcd/skiff/api/v1alpha1"
)

func intOrStr(v int) *intstr.IntOrString { x := intstr.FromInt32(int32(v)); return &x }

// measurements returns n completed measurements of the given phase.
func measurements(phases ...v1alpha1.AnalysisPhase) []v1alpha1.Measurement {
	out := make([]v1alpha1.Measurement, len(phases))
	for i, p := range phases {
		out[i] = v1alpha1.Measurement{Phase: p}
	}
	return out
}

const (
	ok     = v1alpha1.AnalysisPhaseSuccessful
	failed = v1alpha1.AnalysisPhaseFailed
	incon  = v1alpha1.AnalysisPhaseInconclusive
	errd   = v1alpha1.AnalysisPhaseError
	run    = v1alpha1.AnalysisPhaseRunning
	pend   = v1alpha1.AnalysisPhasePending
)

// resultOf records the phases in order, as the controller does.
func resultOf(phases ...v1alpha1.AnalysisPhase) v1alpha1.MetricResult {
	r := v1alpha1.MetricResult{Name: "m"}
	for _, m := range measurements(phases...) {
		Record(&r, m, false)
	}
	return r
}

func TestMetricPhase(t *testing.T) {
	tests := map[string]struct {
		metric      v1alpha1.Metric
		result      v1alpha1.MetricResult
		terminating bool
		want        v1alpha1.AnalysisPhase
	}{
		"a metric not yet measured is pending": {
			result: resultOf(), want: pend,
		},
		"a metric not yet measured in a terminating run is successful": {
			result: resultOf(), terminating: true, want: ok,
		},
		"an in-flight measurement keeps the metric running": {
			result: v1alpha1.MetricResult{Measurements: []v1alpha1.Measurement{{Phase: run}}}, want: run,
		},
		"an in-flight measurement keeps the metric running even when terminating": {
			result: v1alpha1.MetricResult{Measurements: []v1alpha1.Measurement{{Phase: run}}}, terminating: true, want: run,
		},
		"a completed metric keeps its phase": {
			result: v1alpha1.MetricResult{Phase: failed}, want: failed,
		},
		"one success of a metric measured once succeeds": {
			result: resultOf(ok), want: ok,
		},
		"one failure fails with the default failureLimit of 0": {
			result: resultOf(failed), want: failed,
		},
		"failures up to failureLimit keep the metric running": {
			metric: v1alpha1.Metric{Interval: "1m", FailureLimit: intOrStr(2)},
			result: resultOf(failed, failed), want: run,
		},
		"failures past failureLimit fail the metric": {
			metric: v1alpha1.Metric{Interval: "1m", FailureLimit: intOrStr(2)},
			result: resultOf(failed, ok, failed, failed), want: failed,
		},
		"failureLimit -1 never fails the metric": {
			metric: v1alpha1.Metric{Interval: "1m", FailureLimit: intOrStr(-1)},
			result: resultOf(failed, failed, failed, failed, failed), want: run,
		},
		"failureLimit -1 with count reached succeeds however many failed": {
			metric: v1alpha1.Metric{Interval: "1m", Count: intOrStr(3), FailureLimit: intOrStr(-1)},
			result: resultOf(failed, failed, failed), want: ok,
		},
		"failures within failureLimit when count is reached succeed": {
			metric: v1alpha1.Metric{Interval: "1m", Count: intOrStr(3), FailureLimit: intOrStr(1)},
			result: resultOf(ok, failed, ok), want: ok,
		},
		"one inconclusive measurement makes the metric inconclusive by default": {
			result: resultOf(incon), want: incon,
		},
		"inconclusive measurements up to inconclusiveLimit keep it running": {
			metric: v1alpha1.Metric{Interval: "1m", InconclusiveLimit: intOrStr(1)},
			result: resultOf(incon), want: run,
		},
		"inconclusive measurements past inconclusiveLimit make it inconclusive": {
			metric: v1alpha1.Metric{Interval: "1m", InconclusiveLimit: intOrStr(1)},
			result: resultOf(incon, incon), want: incon,
		},
		"four errors in a row are within the default consecutiveErrorLimit": {
			result: resultOf(errd, errd, errd, errd), want: run,
		},
		"five errors in a row pass the default consecutiveErrorLimit of 4": {
			result: resultOf(errd, errd, errd, errd, errd), want: errd,
		},
		"a success resets the consecutive errors": {
			metric: v1alpha1.Metric{Interval: "1m"},
			result: resultOf(errd, errd, errd, ok, errd, errd, errd), want: run,
		},
		"errors do not count toward count": {
			metric: v1alpha1.Metric{Interval: "1m", Count: intOrStr(2)},
			result: resultOf(ok, errd), want: run,
		},
		"consecutiveErrorLimit 0 errors at the first error": {
			metric: v1alpha1.Metric{ConsecutiveErrorLimit: intOrStr(0)},
			result: resultOf(errd), want: errd,
		},
		"error beats inconclusive and failed when all limits are passed": {
			metric: v1alpha1.Metric{Interval: "1m", ConsecutiveErrorLimit: intOrStr(0)},
			result: resultOf(failed, incon, errd), want: errd,
		},
		"inconclusive beats failed when both limits are passed": {
			result: resultOf(failed, incon), want: incon,
		},
		"count reached with successes succeeds": {
			metric: v1alpha1.Metric{Interval: "1m", Count: intOrStr(3)},
			result: resultOf(ok, ok, ok), want: ok,
		},
		"count not reached keeps the metric running": {
			metric: v1alpha1.Metric{Interval: "1m", Count: intOrStr(3)},
			result: resultOf(ok, ok), want: run,
		},
		"a count given as a string is honoured": {
			metric: v1alpha1.Metric{Interval: "1m", Count: &intstr.IntOrString{Type: intstr.String, StrVal: "2"}},
			result: resultOf(ok, ok), want: ok,
		},
		"a metric with an interval and no count runs until the run ends": {
			metric: v1alpha1.Metric{Interval: "1m"},
			result: resultOf(ok, ok, ok, ok, ok, ok), want: run,
		},
		"an indefinite metric in a terminating run is successful": {
			metric: v1alpha1.Metric{Interval: "1m"},
			result: resultOf(ok, ok), terminating: true, want: ok,
		},
		"consecutiveSuccessLimit reached succeeds before count": {
			metric: v1alpha1.Metric{Interval: "1m", Count: intOrStr(10), FailureLimit: intOrStr(-1), ConsecutiveSuccessLimit: intOrStr(2)},
			result: resultOf(failed, ok, ok), want: ok,
		},
		"consecutiveSuccessLimit not yet reached keeps it running": {
			metric: v1alpha1.Metric{Interval: "1m", Count: intOrStr(10), FailureLimit: intOrStr(-1), ConsecutiveSuccessLimit: intOrStr(3)},
			result: resultOf(ok, ok, failed, ok), want: run,
		},
		"count reached without the consecutive successes fails": {
			metric: v1alpha1.Metric{Interval: "1m", Count: intOrStr(3), FailureLimit: intOrStr(-1), ConsecutiveSuccessLimit: intOrStr(2)},
			result: resultOf(ok, failed, ok), want: failed,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			tc.metric.Name = "m"
			if got, msg := MetricPhase(tc.metric, tc.result, tc.terminating); got != tc.want {
				t.Errorf("MetricPhase = %s (%q), want %s", got, msg, tc.want)
			}
		})
	}
}

func TestAssessRun(t *testing.T) {
	type metric struct {
		name       string
		dryRun     bool
		indefinite bool
		result     *v1alpha1.MetricResult
	}
	res := func(phases ...v1alpha1.AnalysisPhase) *v1alpha1.MetricResult { r := resultOf(phases...); return &r }
	inflight := &v1alpha1.MetricResult{Measurements: []v1alpha1.Measurement{{Phase: run}}}
	tests := map[string]struct {
		metrics     []metric
		terminate   bool
		want        v1alpha1.AnalysisPhase
		wantMessage string
		wantSummary v1alpha1.RunSummary
	}{
		"a run whose metrics all succeeded is successful": {
			metrics: []metric{{name: "a", result: res(ok)}, {name: "b", result: res(ok)}},
			want:    ok, wantSummary: v1alpha1.RunSummary{Count: 2, Successful: 2},
		},
		"a run with a metric still pending is running": {
			metrics: []metric{{name: "a", result: res(ok)}, {name: "b"}},
			want:    run, wantSummary: v1alpha1.RunSummary{Count: 2, Successful: 1},
		},
		"a failed metric ends the run at once though another is still measuring": {
			metrics:     []metric{{name: "a", result: res(failed)}, {name: "b", result: inflight}},
			want:        failed,
			wantMessage: `Metric "a" assessed Failed due to failed (1) > failureLimit (0)`,
			wantSummary: v1alpha1.RunSummary{Count: 2, Failed: 1},
		},
		"an errored metric ends the run at once": {
			metrics: []metric{{name: "a", result: res(errd, errd, errd, errd, errd)}, {name: "b"}},
			want:    errd, wantSummary: v1alpha1.RunSummary{Count: 2, Error: 1, Successful: 1},
			wantMessage: `Metric "a" assessed Error due to consecutiveErrors (5) > consecutiveErrorLimit (4)`,
		},
		"failed is worse than error": {
			metrics: []metric{{name: "a", result: res(errd, errd, errd, errd, errd)}, {name: "b", result: res(failed)}},
			want:    failed, wantSummary: v1alpha1.RunSummary{Count: 2, Error: 1, Failed: 1},
			wantMessage: `Metric "b" assessed Failed due to failed (1) > failureLimit (0)`,
		},
		"error is worse than inconclusive": {
			metrics: []metric{{name: "a", result: res(incon)}, {name: "b", result: res(errd, errd, errd, errd, errd)}},
			want:    errd, wantSummary: v1alpha1.RunSummary{Count: 2, Error: 1, Inconclusive: 1},
			wantMessage: `Metric "b" assessed Error due to consecutiveErrors (5) > consecutiveErrorLimit (4)`,
		},
		"inconclusive is worse than success": {
			metrics: []metric{{name: "a", result: res(ok)}, {name: "b", result: res(incon)}},
			want:    incon, wantSummary: v1alpha1.RunSummary{Count: 2, Successful: 1, Inconclusive: 1},
			wantMessage: `Metric "b" assessed Inconclusive due to inconclusive (1) > inconclusiveLimit (0)`,
		},
		"a failed dry-run metric does not fail the run": {
			metrics: []metric{{name: "a", dryRun: true, result: res(failed)}, {name: "b", result: res(ok)}},
			want:    ok, wantSummary: v1alpha1.RunSummary{Count: 1, Successful: 1},
		},
		"a failed dry-run metric does not end the run": {
			metrics: []metric{{name: "a", dryRun: true, result: res(failed)}, {name: "b", result: inflight}},
			want:    run, wantSummary: v1alpha1.RunSummary{Count: 1},
		},
		"a run of only dry-run metrics that failed is successful": {
			metrics: []metric{{name: "a", dryRun: true, result: res(failed)}},
			want:    ok, wantSummary: v1alpha1.RunSummary{},
		},
		"a metric completed on an earlier pass is reported by the limit it passed": {
			metrics: []metric{{name: "a", result: &v1alpha1.MetricResult{Phase: errd, Message: "connection refused", Error: 5, ConsecutiveError: 5,
				Measurements: []v1alpha1.Measurement{{Phase: errd, Message: "connection refused"}}}}},
			want:        errd,
			wantMessage: `Metric "a" assessed Error due to consecutiveErrors (5) > consecutiveErrorLimit (4): connection refused`,
			wantSummary: v1alpha1.RunSummary{Count: 1, Error: 1},
		},
		"terminating a run with nothing measured is successful": {
			metrics: []metric{{name: "a"}, {name: "b"}}, terminate: true,
			want: ok, wantMessage: "Run Terminated", wantSummary: v1alpha1.RunSummary{Count: 2, Successful: 2},
		},
		"terminating a run keeps a failure already found": {
			metrics: []metric{{name: "a", result: res(failed)}}, terminate: true,
			want: failed, wantMessage: `Metric "a" assessed Failed due to failed (1) > failureLimit (0)`,
			wantSummary: v1alpha1.RunSummary{Count: 1, Failed: 1},
		},
		"terminating an indefinite metric succeeds": {
			metrics: []metric{{name: "a", indefinite: true, result: res(ok, ok)}}, terminate: true,
			want: ok, wantMessage: "Run Terminated", wantSummary: v1alpha1.RunSummary{Count: 1, Successful: 1},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			ar := &v1alpha1.AnalysisRun{Spec: v1alpha1.AnalysisRunSpec{Terminate: tc.terminate}}
			for _, m := range tc.metrics {
				spec := v1alpha1.Metric{Name: m.name}
				if m.indefinite {
					spec.Interval = "1m"
				}
				ar.Spec.Metrics = append(ar.Spec.Metrics, spec)
				if m.dryRun {
					ar.Spec.DryRun = append(ar.Spec.DryRun, v1alpha1.DryRun{MetricName: m.name})
				}
				if m.result != nil {
					r := *m.result
					r.Name, r.DryRun = m.name, m.dryRun
					// A completed metric carries its phase, as the controller writes it.
					if phase, msg := MetricPhase(spec, r, false); phase.Completed() {
						r.Phase, r.Message = phase, msg
					}
					ar.Status.MetricResults = append(ar.Status.MetricResults, r)
				}
			}
			v := AssessRun(ar)
			if v.Phase != tc.want {
				t.Errorf("phase = %s, want %s (message %q)", v.Phase, tc.want, v.Message)
			}
			if v.Message != tc.wantMessage {
				t.Errorf("message = %q, want %q", v.Message, tc.wantMessage)
			}
			if v.Summary != tc.wantSummary {
				t.Errorf("summary = %+v, want %+v", v.Summary, tc.wantSummary)
			}
		})
	}
}

func TestIsWorse(t *testing.T) {
	order := []v1alpha1.AnalysisPhase{ok, run, pend, incon, errd, failed}
	for i := range order {
		for j := range order {
			if got, want := IsWorse(order[i], order[j]), j > i; got != want {
				t.Errorf("IsWorse(%s, %s) = %v, want %v", order[i], order[j], got, want)
			}
		}
	}
}

func TestRetention(t *testing.T) {
	tests := map[string]struct {
		retention []v1alpha1.MeasurementRetention
		metric    string
		want      int
	}{
		"without retention a metric keeps 10":  {metric: "m", want: 10},
		"a named metric keeps its limit":       {retention: []v1alpha1.MeasurementRetention{{MetricName: "m", Limit: 3}}, metric: "m", want: 3},
		"a regular expression matches metrics": {retention: []v1alpha1.MeasurementRetention{{MetricName: "err.*", Limit: 2}}, metric: "error-rate", want: 2},
		"another metric keeps the default":     {retention: []v1alpha1.MeasurementRetention{{MetricName: "m", Limit: 3}}, metric: "other", want: 10},
		"a name matches only as a whole":       {retention: []v1alpha1.MeasurementRetention{{MetricName: "m", Limit: 3}}, metric: "mm", want: 10},
		"the first matching entry wins":        {retention: []v1alpha1.MeasurementRetention{{MetricName: ".*", Limit: 4}, {MetricName: "m", Limit: 3}}, metric: "m", want: 4},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := RetentionLimit(tc.retention, tc.metric); got != tc.want {
				t.Errorf("RetentionLimit = %d, want %d", got, tc.want)
			}
		})
	}
	kept := TrimMeasurements(measurements(failed, ok, incon), 2)
	if len(kept) != 2 || kept[0].Phase != ok || kept[1].Phase != incon {
		t.Errorf("TrimMeasurements kept %+v, want the last two", kept)
	}
}

func TestIsDryRun(t *testing.T) {
	tests := map[string]struct {
		dryRun []v1alpha1.DryRun
		metric string
		want   bool
	}{
		"no dryRun entries":         {metric: "m", want: false},
		"a named metric is dry-run": {dryRun: []v1alpha1.DryRun{{MetricName: "m"}}, metric: "m", want: true},
		"a star makes all dry-run":  {dryRun: []v1alpha1.DryRun{{MetricName: "*"}}, metric: "m", want: true},
		"another metric is not":     {dryRun: []v1alpha1.DryRun{{MetricName: "x"}}, metric: "m", want: false},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := IsDryRun(tc.dryRun, tc.metric); got != tc.want {
				t.Errorf("IsDryRun = %v, want %v", got, tc.want)
			}
		})
	}
}
