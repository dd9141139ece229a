package analysis

import (
	"context"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/skiffcd/skiff/api/v1alpha1"
)

// spec.terminate ends a run that would measure forever: Successful with
// "Run Terminated", as Argo Rollouts does, and no measurement after it.
func TestTerminateEndsTheRun(t *testing.T) {
	c := startController(t)
	ns := cluster.Namespace(t)
	run := readRun(t, "web-run.yaml", ns)
	run.Spec.Args[0].Value = v1alpha1.NewAnyString(okServer(t))
	if err := c.Create(context.Background(), run); err != nil {
		t.Fatal(err)
	}
	waitForRun(t, c, run, "a first measurement", func(r *v1alpha1.AnalysisRun) bool {
		return len(r.Status.MetricResults) == 1 && r.Status.MetricResults[0].Successful >= 1
	})
	patch := client.RawPatch("application/merge-patch+json", []byte(`{"spec":{"terminate":true}}`))
	if err := c.Patch(context.Background(), run, patch); err != nil {
		t.Fatal(err)
	}
	got := waitForRun(t, c, run, "the run to end", phaseIs(v1alpha1.AnalysisPhaseSuccessful))
	if got.Status.Message != "Run Terminated" || got.Status.CompletedAt == nil {
		t.Errorf("status %+v, want message Run Terminated and completedAt", got.Status)
	}
	if res := result(t, got, "healthy"); res.Phase != v1alpha1.AnalysisPhaseSuccessful {
		t.Errorf("metric phase = %s, want Successful", res.Phase)
	}
}
