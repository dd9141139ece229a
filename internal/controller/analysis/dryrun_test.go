package analysis

import (
	"context"
	"testing"

	"github.com/skiffcd/skiff/api/v1alpha1"
)

// A failing dry-run metric is reported but neither fails nor ends the run.
func TestDryRunMetricDoesNotFailTheRun(t *testing.T) {
	c := startController(t)
	ns := cluster.Namespace(t)
	run := readRun(t, "dryrun-run.yaml", ns)
	run.Spec.Args[0].Value = v1alpha1.NewAnyString(okServer(t))
	if err := c.Create(context.Background(), run); err != nil {
		t.Fatal(err)
	}
	got := waitForRun(t, c, run, "the run to complete", completed)
	if got.Status.Phase != v1alpha1.AnalysisPhaseSuccessful {
		t.Fatalf("run phase = %s (%s), want Successful", got.Status.Phase, got.Status.Message)
	}
	if res := result(t, got, "experimental"); res.Phase != v1alpha1.AnalysisPhaseFailed || !res.DryRun {
		t.Errorf("dry-run metric %+v, want Failed and marked dryRun", res)
	}
	if s := got.Status.DryRunSummary; s == nil || s.Failed != 1 || s.Count != 1 {
		t.Errorf("dryRunSummary = %+v, want one failed", s)
	}
	if s := got.Status.RunSummary; s.Successful != 1 || s.Count != 1 {
		t.Errorf("runSummary = %+v, want one successful", s)
	}
}
