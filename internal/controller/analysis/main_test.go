package analysis

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/skiffcd/skiff/api/v1alpha1"
	"github.com/skiffcd/skiff/internal/analysis/provider"
	"github.com/skiffcd/skiff/internal/testcluster"
	"github.com/skiffcd/skiff/internal/testwait"
)

var cluster *testcluster.Cluster

func TestMain(m *testing.M) {
	os.Exit(testcluster.RunMainWithCRDs(m, func(c *testcluster.Cluster) { cluster = c }))
}

// startController runs the AnalysisRun controller until the test ends and
// returns a direct client.
func startController(t *testing.T) client.Client {
	t.Helper()
	return cluster.StartManager(t, func(mgr ctrl.Manager) error {
		r := &Reconciler{
			Client:     mgr.GetClient(),
			APIReader:  mgr.GetAPIReader(),
			Providers:  &provider.Factory{Client: mgr.GetClient(), JobPoll: 500 * time.Millisecond},
			ErrorRetry: 200 * time.Millisecond,
		}
		return r.SetupWithManager(mgr)
	})
}

// readRun decodes testdata/<file> as an AnalysisRun in ns.
func readRun(t *testing.T, file, ns string) *v1alpha1.AnalysisRun {
	t.Helper()
	run := &v1alpha1.AnalysisRun{}
	testcluster.ReadYAML(t, "testdata/"+file, run, ns)
	return run
}

// waitForRun reads the run until done says so, for up to 60 s.
func waitForRun(t *testing.T, c client.Client, run *v1alpha1.AnalysisRun, what string, done func(*v1alpha1.AnalysisRun) bool) *v1alpha1.AnalysisRun {
	t.Helper()
	got := &v1alpha1.AnalysisRun{}
	testwait.Eventually(t, what, func() error {
		if err := c.Get(context.Background(), client.ObjectKeyFromObject(run), got); err != nil {
			return err
		}
		if !done(got) {
			return fmt.Errorf("last status: %+v", got.Status)
		}
		return nil
	}, testwait.Timeout(60*time.Second))
	return got
}

func phaseIs(phase v1alpha1.AnalysisPhase) func(*v1alpha1.AnalysisRun) bool {
	return func(r *v1alpha1.AnalysisRun) bool { return r.Status.Phase == phase }
}

func completed(r *v1alpha1.AnalysisRun) bool { return r.Status.Phase.Completed() }

func result(t *testing.T, run *v1alpha1.AnalysisRun, metric string) v1alpha1.MetricResult {
	t.Helper()
	for _, r := range run.Status.MetricResults {
		if r.Name == metric {
			return r
		}
	}
	t.Fatalf("no result for metric %q in %+v", metric, run.Status)
	return v1alpha1.MetricResult{}
}
