package analysis

import (
	"context"
	"testing"
	"time"

	"github.com/skiffcd/skiff/api/v1alpha1"
	"github.com/skiffcd/skiff/internal/testcluster"
	"github.com/skiffcd/skiff/internal/testwait"
)

// initialDelay holds the first measurement back, count ends the metric,
// and measurementRetention keeps only the last measurements.
func TestInitialDelayCountAndRetention(t *testing.T) {
	c := startController(t)
	ns := cluster.Namespace(t)
	run := readRun(t, "scheduled-run.yaml", ns)
	run.Spec.Args[0].Value = v1alpha1.NewAnyString(okServer(t))
	if err := c.Create(context.Background(), run); err != nil {
		t.Fatal(err)
	}
	got := waitForRun(t, c, run, "the run to complete", completed)
	res := result(t, got, "healthy")
	if got.Status.Phase != v1alpha1.AnalysisPhaseSuccessful || res.Count != 3 || res.Successful != 3 {
		t.Fatalf("run %s (%s), metric %+v; want Successful after 3 measurements", got.Status.Phase, got.Status.Message, res)
	}
	if len(res.Measurements) != 2 {
		t.Errorf("kept %d measurements, want 2 (measurementRetention)", len(res.Measurements))
	}
	// Three measurements a second apart after a 2 s delay: the last began
	// at least 4 s after the run (times are stored to the second).
	if last := res.Measurements[len(res.Measurements)-1]; last.StartedAt.Sub(got.Status.StartedAt.Time) < 4*time.Second {
		t.Errorf("last measurement started %s after the run, want at least 4s", last.StartedAt.Sub(got.Status.StartedAt.Time))
	}
}

// A finished run with ttlStrategy.secondsAfterCompletion is deleted then.
func TestTTLStrategyDeletesAFinishedRun(t *testing.T) {
	c := startController(t)
	ns := cluster.Namespace(t)
	run := readRun(t, "dryrun-run.yaml", ns)
	run.Spec.Args[0].Value = v1alpha1.NewAnyString(okServer(t))
	one := int32(1)
	run.Spec.TTLStrategy = &v1alpha1.TTLStrategy{SecondsAfterCompletion: &one}
	if err := c.Create(context.Background(), run); err != nil {
		t.Fatal(err)
	}
	testwait.Eventually(t, "the run to be deleted after its TTL", testcluster.Gone(c, run), testwait.Timeout(60*time.Second))
}
