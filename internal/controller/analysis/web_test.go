package analysis

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/skiffcd/skiff/api/v1alpha1"
)

// A web metric measured every second passes while the server says ok and
// fails the run at the first failure once it stops saying so.
func TestWebMetricFailsTheRunWhenTheServerTurns(t *testing.T) {
	c := startController(t)
	ns := cluster.Namespace(t)
	var healthy atomic.Bool
	healthy.Store(true)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = fmt.Fprintf(w, `{"data":{"ok":%v}}`, healthy.Load())
	}))
	t.Cleanup(srv.Close)

	run := readRun(t, "web-run.yaml", ns)
	run.Spec.Args[0].Value = v1alpha1.NewAnyString(srv.URL)
	if err := c.Create(context.Background(), run); err != nil {
		t.Fatal(err)
	}
	got := waitForRun(t, c, run, "two successful measurements", func(r *v1alpha1.AnalysisRun) bool {
		return len(r.Status.MetricResults) == 1 && r.Status.MetricResults[0].Successful >= 2
	})
	if got.Status.Phase != v1alpha1.AnalysisPhaseRunning || got.Status.StartedAt == nil {
		t.Fatalf("an indefinite metric's run is %s (startedAt %v), want Running", got.Status.Phase, got.Status.StartedAt)
	}
	healthy.Store(false)

	got = waitForRun(t, c, run, "the run to complete", completed)
	if got.Status.Phase != v1alpha1.AnalysisPhaseFailed {
		t.Fatalf("run phase = %s (%s), want Failed", got.Status.Phase, got.Status.Message)
	}
	res := result(t, got, "healthy")
	last := res.Measurements[len(res.Measurements)-1]
	if res.Phase != v1alpha1.AnalysisPhaseFailed || res.Failed != 1 || last.Phase != v1alpha1.AnalysisPhaseFailed || last.Value != "false" {
		t.Errorf("metric result %+v, want Failed with a last measurement of value false", res)
	}
	if last.StartedAt == nil || last.FinishedAt == nil {
		t.Errorf("the failed measurement is not timed: %+v", last)
	}
	if first := res.Measurements[0]; first.Phase != v1alpha1.AnalysisPhaseSuccessful || first.Value != "true" {
		t.Errorf("first measurement %+v, want Successful with value true", first)
	}
	if got.Status.CompletedAt == nil || got.Status.RunSummary.Failed != 1 || got.Status.RunSummary.Count != 1 {
		t.Errorf("run status %+v, want completedAt and a summary of one failed metric", got.Status)
	}
	if want := `Metric "healthy" assessed Failed due to failed (1) > failureLimit (0)`; got.Status.Message != want {
		t.Errorf("run message = %q, want %q", got.Status.Message, want)
	}
}
