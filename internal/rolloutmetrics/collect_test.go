package rolloutmetrics

import (
	"sort"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/skiffcd/skiff/api/v1alpha1"
)

// series collects what collect sends as "name{label=value,...}" → value,
// labels in name order.
func series(t *testing.T, collect func(chan<- prometheus.Metric)) map[string]float64 {
	t.Helper()
	ch := make(chan prometheus.Metric, 256)
	collect(ch)
	close(ch)
	out := map[string]float64{}
	for m := range ch {
		var pb dto.Metric
		if err := m.Write(&pb); err != nil {
			t.Fatal(err)
		}
		var labels []string
		for _, l := range pb.GetLabel() {
			labels = append(labels, l.GetName()+"="+l.GetValue())
		}
		sort.Strings(labels)
		name := m.Desc().String()
		name = name[strings.Index(name, `fqName: "`)+len(`fqName: "`):]
		name = name[:strings.Index(name, `"`)]
		out[name+"{"+strings.Join(labels, ",")+"}"] = pb.GetGauge().GetValue()
	}
	return out
}

func TestAnalysisRunSeriesFollowTheRunAndItsMetrics(t *testing.T) {
	run := func(phase v1alpha1.AnalysisPhase, results ...v1alpha1.MetricResult) *v1alpha1.AnalysisRun {
		return &v1alpha1.AnalysisRun{
			Spec: v1alpha1.AnalysisRunSpec{
				Metrics: []v1alpha1.Metric{
					{Name: "errors", Provider: v1alpha1.MetricProvider{Web: &v1alpha1.WebMetric{}}},
					{Name: "latency", Provider: v1alpha1.MetricProvider{Job: &v1alpha1.JobMetric{}}},
				},
				DryRun: []v1alpha1.DryRun{{MetricName: "latency"}},
			},
			Status: v1alpha1.AnalysisRunStatus{Phase: phase, MetricResults: results},
		}
	}
	tests := map[string]struct {
		run  *v1alpha1.AnalysisRun
		want map[string]float64
	}{
		"a new run is Pending, and so are its metrics": {
			run: run(""),
			want: map[string]float64{
				`analysis_run_info{name=bg-1,namespace=web,phase=}`:                                                     1,
				`analysis_run_phase{name=bg-1,namespace=web,phase=Pending}`:                                             1,
				`analysis_run_phase{name=bg-1,namespace=web,phase=Running}`:                                             0,
				`analysis_run_metric_phase{dry_run=false,metric=errors,name=bg-1,namespace=web,phase=Pending,type=Web}`: 1,
				`analysis_run_metric_phase{dry_run=true,metric=latency,name=bg-1,namespace=web,phase=Pending,type=Job}`: 1,
				`analysis_run_metric_type{metric=errors,name=bg-1,namespace=web,type=Web}`:                              1,
				`analysis_run_metric_type{metric=latency,name=bg-1,namespace=web,type=Job}`:                             1,
			},
		},
		"a metric's result sets its phase": {
			run: run(v1alpha1.AnalysisPhaseRunning, v1alpha1.MetricResult{Name: "errors", Phase: v1alpha1.AnalysisPhaseSuccessful}),
			want: map[string]float64{
				`analysis_run_info{name=bg-1,namespace=web,phase=Running}`:                                                 1,
				`analysis_run_phase{name=bg-1,namespace=web,phase=Running}`:                                                1,
				`analysis_run_phase{name=bg-1,namespace=web,phase=Pending}`:                                                0,
				`analysis_run_metric_phase{dry_run=false,metric=errors,name=bg-1,namespace=web,phase=Successful,type=Web}`: 1,
				`analysis_run_metric_phase{dry_run=false,metric=errors,name=bg-1,namespace=web,phase=Pending,type=Web}`:    0,
				`analysis_run_metric_phase{dry_run=true,metric=latency,name=bg-1,namespace=web,phase=Pending,type=Job}`:    1,
			},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			tc.run.Namespace, tc.run.Name = "web", "bg-1"
			got := series(t, func(ch chan<- prometheus.Metric) { collectAnalysisRun(ch, tc.run) })
			for s, want := range tc.want {
				if v, ok := got[s]; !ok || v != want {
					t.Errorf("%s = %v (present %v), want %v", s, v, ok, want)
				}
			}
			// One series per phase for the run and for each metric.
			if n := len(got); n != 1+6+2*(1+6) {
				t.Errorf("%d series, want %d", n, 1+6+2*(1+6))
			}
		})
	}
}

func TestRolloutSeriesCarryStrategyPhaseAndReplicas(t *testing.T) {
	replicas := int32(3)
	ro := withConditions(progressing("RolloutPaused"))
	ro.Namespace, ro.Name = "web", "shop"
	ro.Spec.Replicas = &replicas
	ro.Spec.Strategy.BlueGreen = &v1alpha1.BlueGreenStrategy{}
	ro.Status.Replicas, ro.Status.AvailableReplicas, ro.Status.UpdatedReplicas = 6, 4, 3
	got := series(t, func(ch chan<- prometheus.Metric) { collectRollout(ch, ro) })
	want := map[string]float64{
		`rollout_info{name=shop,namespace=web,phase=Paused,strategy=blueGreen,traffic_router=}`: 1,
		`rollout_info_replicas_available{name=shop,namespace=web}`:                              4,
		`rollout_info_replicas_unavailable{name=shop,namespace=web}`:                            2,
		`rollout_info_replicas_desired{name=shop,namespace=web}`:                                3,
		`rollout_info_replicas_updated{name=shop,namespace=web}`:                                3,
		`rollout_phase{name=shop,namespace=web,phase=Paused,strategy=blueGreen}`:                1,
		`rollout_phase{name=shop,namespace=web,phase=Completed,strategy=blueGreen}`:             0,
		`rollout_phase{name=shop,namespace=web,phase=Progressing,strategy=blueGreen}`:           0,
	}
	for s, w := range want {
		if v, ok := got[s]; !ok || v != w {
			t.Errorf("%s = %v (present %v), want %v", s, v, ok, w)
		}
	}
	if len(got) != 5+len(rolloutPhases) {
		t.Errorf("%d series, want %d:\n%v", len(got), 5+len(rolloutPhases), got)
	}
}
