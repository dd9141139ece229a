package analysis

import (
	"context"
	"testing"

	"github.com/skiffcd/skiff/api/v1alpha1"
	"github.com/skiffcd/skiff/internal/analysis/provider/promtest"
)

// A real Prometheus scrapes an error rate the test sets: under the
// threshold the run succeeds after its count; over it the run fails once
// the failures pass failureLimit.
func TestPrometheusMetric(t *testing.T) {
	c := startController(t)
	target := promtest.NewTarget(t)
	target.Set("skiff_test_error_rate", 0.01)
	address := promtest.Start(t, target)
	promtest.WaitForValue(t, address, "skiff_test_error_rate", 0.01)

	ns := cluster.Namespace(t)
	good := readRun(t, "prometheus-run.yaml", ns)
	good.Spec.Args[0].Value = v1alpha1.NewAnyString(address)
	if err := c.Create(context.Background(), good); err != nil {
		t.Fatal(err)
	}
	got := waitForRun(t, c, good, "the healthy run to complete", completed)
	res := result(t, got, "error-rate")
	if got.Status.Phase != v1alpha1.AnalysisPhaseSuccessful || res.Count != 3 || res.Successful != 3 {
		t.Fatalf("run %s (%s), metric %+v; want Successful after 3 successful measurements", got.Status.Phase, got.Status.Message, res)
	}
	if v := res.Measurements[0].Value; v != "[0.01]" {
		t.Errorf("value = %q, want [0.01]", v)
	}

	target.Set("skiff_test_error_rate", 0.5)
	promtest.WaitForValue(t, address, "skiff_test_error_rate", 0.5)
	bad := readRun(t, "prometheus-run.yaml", ns)
	bad.Name = "error-rate-high"
	bad.Spec.Args[0].Value = v1alpha1.NewAnyString(address)
	if err := c.Create(context.Background(), bad); err != nil {
		t.Fatal(err)
	}
	got = waitForRun(t, c, bad, "the unhealthy run to complete", completed)
	res = result(t, got, "error-rate")
	if got.Status.Phase != v1alpha1.AnalysisPhaseFailed || res.Failed != 2 {
		t.Fatalf("run %s (%s), metric %+v; want Failed after 2 failures (failureLimit 1)", got.Status.Phase, got.Status.Message, res)
	}
	if want := `Metric "error-rate" assessed Failed due to failed (2) > failureLimit (1)`; got.Status.Message != want {
		t.Errorf("message = %q, want %q", got.Status.Message, want)
	}
}
