package provider

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/skiffcd/skiff/api/v1alpha1"
	"github.com/skiffcd/skiff/internal/analysis/provider/promtest"
)

// A real Prometheus scrapes a target whose gauges the test sets; the
// provider's verdicts follow the values.
func TestPrometheusAgainstARealServer(t *testing.T) {
	target := promtest.NewTarget(t)
	target.Set("skiff_test_error_rate", 0.01)
	target.Set("skiff_test_other", 3)
	address := promtest.Start(t, target)
	promtest.WaitForValue(t, address, "skiff_test_error_rate", 0.01)
	promtest.WaitForValue(t, address, "skiff_test_other", 3)

	p := &Prometheus{Now: time.Now}
	metric := func(query, success string) v1alpha1.Metric {
		return v1alpha1.Metric{Name: "m", SuccessCondition: success,
			Provider: v1alpha1.MetricProvider{Prometheus: &v1alpha1.PrometheusMetric{Address: address, Query: query}}}
	}
	tests := map[string]struct {
		metric      v1alpha1.Metric
		wantPhase   v1alpha1.AnalysisPhase
		wantValue   string
		wantMessage string
	}{
		"a vector of one sample is an array of one, as in Argo Rollouts": {
			metric:    metric("skiff_test_error_rate", "result[0] < 0.05"),
			wantPhase: v1alpha1.AnalysisPhaseSuccessful, wantValue: "[0.01]",
		},
		"a value over the threshold fails": {
			metric:    metric("skiff_test_error_rate", "result[0] < 0.005"),
			wantPhase: v1alpha1.AnalysisPhaseFailed, wantValue: "[0.01]",
		},
		"a scalar is a number": {
			metric:    metric("scalar(skiff_test_other)", "result == 3"),
			wantPhase: v1alpha1.AnalysisPhaseSuccessful, wantValue: "3",
		},
		"a bare comparison with a vector is an error, as in Argo Rollouts": {
			metric:      metric("skiff_test_error_rate", "result < 0.05"),
			wantPhase:   v1alpha1.AnalysisPhaseError,
			wantMessage: "evaluating condition",
		},
		"a vector of several samples is an array": {
			metric:    metric(`{__name__=~"skiff_test_.*"}`, "len(result) == 2"),
			wantPhase: v1alpha1.AnalysisPhaseSuccessful,
		},
		"an empty vector fails a condition that indexes it with an error": {
			metric:      metric("nothing_here", "result[0] < 1"),
			wantPhase:   v1alpha1.AnalysisPhaseError,
			wantMessage: "evaluating condition",
		},
		"a query that does not parse is an error naming Prometheus' complaint": {
			metric:      metric("rate(", "result < 1"),
			wantPhase:   v1alpha1.AnalysisPhaseError,
			wantMessage: "query failed (bad_data)",
		},
		"an unreachable address is an error": {
			metric: v1alpha1.Metric{Name: "m", Provider: v1alpha1.MetricProvider{Prometheus: &v1alpha1.PrometheusMetric{
				Address: "http://127.0.0.1:1", Query: "up"}}},
			wantPhase: v1alpha1.AnalysisPhaseError, wantMessage: "connection refused",
		},
		"a missing address is an error": {
			metric:    v1alpha1.Metric{Name: "m", Provider: v1alpha1.MetricProvider{Prometheus: &v1alpha1.PrometheusMetric{Query: "up"}}},
			wantPhase: v1alpha1.AnalysisPhaseError, wantMessage: "address is required",
		},
		"an address without a scheme is an error": {
			metric:    v1alpha1.Metric{Name: "m", Provider: v1alpha1.MetricProvider{Prometheus: &v1alpha1.PrometheusMetric{Address: "127.0.0.1:9090", Query: "up"}}},
			wantPhase: v1alpha1.AnalysisPhaseError, wantMessage: "invalid address",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			m := p.Run(context.Background(), &v1alpha1.AnalysisRun{}, tc.metric)
			if m.Phase != tc.wantPhase {
				t.Errorf("phase = %s (%s), want %s", m.Phase, m.Message, tc.wantPhase)
			}
			if tc.wantValue != "" && m.Value != tc.wantValue {
				t.Errorf("value = %q, want %q", m.Value, tc.wantValue)
			}
			if !strings.Contains(m.Message, tc.wantMessage) {
				t.Errorf("message = %q, want it to contain %q", m.Message, tc.wantMessage)
			}
			if m.StartedAt == nil || m.FinishedAt == nil {
				t.Errorf("measurement not timed: %+v", m)
			}
		})
	}
}

// A server that never answers is cut off by the metric's timeout.
func TestPrometheusTimeout(t *testing.T) {
	addr := hangingServer(t)
	timeout := int64(1)
	p := &Prometheus{Now: time.Now}
	start := time.Now()
	m := p.Run(context.Background(), &v1alpha1.AnalysisRun{}, v1alpha1.Metric{Name: "m",
		Provider: v1alpha1.MetricProvider{Prometheus: &v1alpha1.PrometheusMetric{Address: addr, Query: "up", Timeout: &timeout}}})
	if m.Phase != v1alpha1.AnalysisPhaseError || !strings.Contains(m.Message, "deadline exceeded") {
		t.Errorf("got %s %q, want an Error for the timeout", m.Phase, m.Message)
	}
	if elapsed := time.Since(start); elapsed > 10*time.Second {
		t.Errorf("took %s despite a 1 s timeout", elapsed)
	}
}
