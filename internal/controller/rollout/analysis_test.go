package rollout

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/skiffcd/skiff/api/v1alpha1"
	"github.com/skiffcd/skiff/internal/analysis/provider/promtest"
	"github.com/skiffcd/skiff/internal/rollout"
	"github.com/skiffcd/skiff/internal/testcluster"
)

// readTemplate decodes testdata/<file> as an AnalysisTemplate in ns.
func readTemplate(t *testing.T, file, ns string) *v1alpha1.AnalysisTemplate {
	t.Helper()
	tmpl := &v1alpha1.AnalysisTemplate{}
	testcluster.ReadYAML(t, "testdata/"+file, tmpl, ns)
	return tmpl
}

// analysisRun reads the AnalysisRun name in ns, nil when absent.
func analysisRun(t *testing.T, c client.Client, ns, name string) *v1alpha1.AnalysisRun {
	t.Helper()
	run := &v1alpha1.AnalysisRun{}
	if err := c.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, run); err != nil {
		if client.IgnoreNotFound(err) == nil {
			return nil
		}
		t.Fatal(err)
	}
	return run
}

func runNames(t *testing.T, c client.Client, ns string) []string {
	t.Helper()
	var list v1alpha1.AnalysisRunList
	if err := c.List(context.Background(), &list, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, r := range list.Items {
		names = append(names, r.Name)
	}
	return names
}

// The seeds' postPromotionAnalysis walkthrough: the first revision goes
// live without analysis; an update switches the active Service, runs the
// Job template and, when the Job succeeds, becomes stable. After the
// template is edited to fail, the next update switches, the run fails and
// the active Service goes back to the previous revision: Degraded.
func TestBlueGreenPostPromotionAnalysisFromTheSeeds(t *testing.T) {
	c := startController(t)
	ns := cluster.Namespace(t)
	create(t, c, readTemplate(t, "test-analysistemp.yml", ns))
	createServices(t, c, "rollout-active-service-analysis.yml", ns)
	ro := readRollout(t, "rollout-bg-test-analysis.yml", ns)
	create(t, c, ro)
	first := waitFor(t, c, ro, "first revision Healthy", healthyAt)
	if names := runNames(t, c, ns); len(names) != 0 {
		t.Errorf("the first revision ran analysis %v; Argo Rollouts runs none on the initial deploy", names)
	}

	second := setImage(t, c, ro, "nginx:stable")
	done := waitFor(t, c, ro, "second revision Healthy after the analysis", healthyAt)
	runName := "rollout-bg-test-analysis-" + second + "-2-post"
	run := analysisRun(t, c, ns, runName)
	if run == nil {
		t.Fatalf("no AnalysisRun %s; runs: %v", runName, runNames(t, c, ns))
	}
	if run.Status.Phase != v1alpha1.AnalysisPhaseSuccessful {
		t.Errorf("run phase %s (%s), want Successful", run.Status.Phase, run.Status.Message)
	}
	wantLabels := map[string]string{rollout.RunTypeLabel: "PostPromotion", rollout.PodTemplateHashLabel: second, "app": "rollout-bg-analysis"}
	for k, v := range wantLabels {
		if run.Labels[k] != v {
			t.Errorf("run label %s = %q, want %q", k, run.Labels[k], v)
		}
	}
	if run.Annotations[AnnotationRevision] != "2" {
		t.Errorf("run revision annotation = %q, want 2", run.Annotations[AnnotationRevision])
	}
	if owner := run.OwnerReferences; len(owner) != 1 || owner[0].UID != done.UID || !ptr.Deref(owner[0].Controller, false) {
		t.Errorf("run owners %+v, want the Rollout as controller", owner)
	}
	if s := done.Status.BlueGreen.PostPromotionAnalysisRunStatus; s == nil || s.Name != runName || s.Status != v1alpha1.AnalysisPhaseSuccessful {
		t.Errorf("status.blueGreen.postPromotionAnalysisRunStatus = %+v, want %s Successful", s, runName)
	}
	if done.Status.StableRS != second {
		t.Errorf("stableRS = %s, want %s", done.Status.StableRS, second)
	}

	// kubectl edit analysistemplate test-analysis: the Job now fails. kwok
	// does not run containers, so `exit 1` alone would still succeed; the
	// pod cannot be scheduled and the Job fails at its deadline instead.
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		tmpl := &v1alpha1.AnalysisTemplate{}
		if err := c.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "test-analysis"}, tmpl); err != nil {
			return err
		}
		job := tmpl.Spec.Metrics[0].Provider.Job
		job.Spec.Template.Spec.Containers[0].Args = []string{"exit 1"}
		job.Spec.Template.Spec.NodeSelector = map[string]string{"no-such-node": "true"}
		job.Spec.ActiveDeadlineSeconds = ptr.To[int64](2)
		return c.Update(context.Background(), tmpl)
	})
	if err != nil {
		t.Fatal(err)
	}
	third := setImage(t, c, ro, "nginx:1.19")
	degraded := waitFor(t, c, ro, "Degraded after the failed analysis", phaseIs(v1alpha1.RolloutPhaseDegraded))
	failedRun := "rollout-bg-test-analysis-" + third + "-3-post"
	if run := analysisRun(t, c, ns, failedRun); run == nil || run.Status.Phase != v1alpha1.AnalysisPhaseFailed {
		t.Fatalf("run %s = %+v, want Failed", failedRun, run)
	}
	if !strings.Contains(degraded.Status.Message, "RolloutAborted") || !strings.Contains(degraded.Status.Message, `Metric "test-analysis" assessed Failed`) {
		t.Errorf("message = %q, want the abort with the metric's failure", degraded.Status.Message)
	}
	if got := serviceHash(t, c, ns, "rollout-active-service-analysis"); got != second {
		t.Errorf("active Service selects %s after the failed analysis, want the previous revision %s", got, second)
	}
	if degraded.Status.StableRS != second {
		t.Errorf("stableRS = %s, want %s", degraded.Status.StableRS, second)
	}
	if counts := rsCounts(t, c, ro, second); counts != "2/2" {
		t.Errorf("previous revision = %s, want 2/2 serving", counts)
	}
	if first.Status.CurrentPodHash == second {
		t.Fatal("the image update did not change the pod template hash")
	}
}

// setupErrorRate starts Prometheus scraping a target whose error rate the
// test sets, creates the error-rate template and the canary of
// testdata/canary-analysis.yml, and waits for its first revision.
func setupErrorRate(t *testing.T, c client.Client, ns string) (*promtest.Target, string, *v1alpha1.Rollout) {
	t.Helper()
	target := promtest.NewTarget(t)
	target.Set("skiff_test_error_rate", 0.01)
	address := promtest.Start(t, target)
	promtest.WaitForValue(t, address, "skiff_test_error_rate", 0.01)

	create(t, c, readTemplate(t, "error-rate-template.yml", ns))
	createServices(t, c, "canary-analysis-services.yml", ns)
	ro := readRollout(t, "canary-analysis.yml", ns)
	ro.Spec.Strategy.Canary.Steps[1].Analysis.Args[0].Value = v1alpha1.NewAnyString(address)
	create(t, c, ro)
	waitFor(t, c, ro, "first revision Healthy", healthyAt)
	return target, address, ro
}

// A canary with an analysis step gated by a real Prometheus: while the
// error rate stays under the threshold the step passes and the update
// completes; when it rises the run fails, the rollout aborts, and all
// replicas and both Services are back on the stable revision.
func TestCanaryAnalysisStepWithPrometheus(t *testing.T) {
	c := startController(t)
	ns := cluster.Namespace(t)
	target, address, ro := setupErrorRate(t, c, ns)
	stable := waitFor(t, c, ro, "first revision", healthyAt).Status.CurrentPodHash

	good := setImage(t, c, ro, "argoproj/rollouts-demo:yellow")
	done := waitFor(t, c, ro, "the good canary Healthy", healthyAt)
	runName := "canary-analysis-" + good + "-2-1"
	run := analysisRun(t, c, ns, runName)
	if run == nil || run.Status.Phase != v1alpha1.AnalysisPhaseSuccessful {
		t.Fatalf("step run %s = %+v, want Successful; runs: %v", runName, run, runNames(t, c, ns))
	}
	if run.Labels[rollout.RunTypeLabel] != "Step" || run.Labels[rollout.RunStepIndexLabel] != "1" {
		t.Errorf("run labels %v, want rollout-type Step and step-index 1", run.Labels)
	}
	args := map[string]string{}
	for _, a := range run.Spec.Args {
		if a.Value != nil {
			args[a.Name] = a.Value.String()
		}
	}
	if args["canary-hash"] != good || args["prometheus-address"] != address {
		t.Errorf("run args %v, want canary-hash %s (Latest) and the Prometheus address", args, good)
	}
	// The step is over: as in Argo Rollouts the status no longer names its run.
	if s := done.Status.Canary.CurrentStepAnalysisRunStatus; s != nil {
		t.Errorf("currentStepAnalysisRunStatus = %+v after the steps, want none", s)
	}
	if res := run.Status.MetricResults; len(res) != 1 || res[0].Successful != 3 {
		t.Errorf("metric results %+v, want 3 successful measurements", res)
	}

	target.Set("skiff_test_error_rate", 0.5)
	promtest.WaitForValue(t, address, "skiff_test_error_rate", 0.5)
	bad := setImage(t, c, ro, "argoproj/rollouts-demo:red")
	degraded := waitFor(t, c, ro, "the bad canary aborted", phaseIs(v1alpha1.RolloutPhaseDegraded))
	badRun := "canary-analysis-" + bad + "-3-1"
	if run := analysisRun(t, c, ns, badRun); run == nil || run.Status.Phase != v1alpha1.AnalysisPhaseFailed {
		t.Fatalf("step run %s = %+v, want Failed", badRun, run)
	}
	if !strings.Contains(degraded.Status.Message, `Metric "error-rate" assessed Failed`) {
		t.Errorf("message = %q, want the metric's failure", degraded.Status.Message)
	}
	if degraded.Status.StableRS != good {
		t.Errorf("stableRS = %s, want %s", degraded.Status.StableRS, good)
	}
	waitForSplit(t, c, ro, bad, good, "0/0", "5/5")
	for _, svc := range []string{"canary-analysis-stable", "canary-analysis-canary"} {
		if got := serviceHash(t, c, ns, svc); got != good {
			t.Errorf("Service %s selects %s after the abort, want the stable %s", svc, got, good)
		}
	}
	if stable == good {
		t.Fatal("the image update did not change the pod template hash")
	}
}

// webValue serves {"value": N} with the N the test sets.
func webValue(t *testing.T) (*atomic.Int64, string) {
	t.Helper()
	var v atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"value": ` + strconv.FormatInt(v.Load(), 10) + `}`))
	}))
	t.Cleanup(srv.Close)
	return &v, srv.URL
}

// A background analysis that is Inconclusive pauses the canary with reason
// InconclusiveAnalysisRun; a promote runs the analysis again, and when it
// then succeeds the update completes.
func TestCanaryInconclusiveBackgroundAnalysisPausesUntilPromoted(t *testing.T) {
	c := startController(t)
	ns := cluster.Namespace(t)
	value, url := webValue(t)
	value.Store(7) // between failure (< 5) and success (> 10)
	tmpl := &v1alpha1.AnalysisTemplate{}
	tmpl.Name, tmpl.Namespace = "score", ns
	tmpl.Spec.Metrics = []v1alpha1.Metric{{
		Name:             "score",
		Count:            ptr.To(intstr.FromInt32(1)),
		SuccessCondition: "result > 10",
		FailureCondition: "result < 5",
		Provider:         v1alpha1.MetricProvider{Web: &v1alpha1.WebMetric{URL: url, JSONPath: "{$.value}"}},
	}}
	create(t, c, tmpl)
	createServices(t, c, "canary-services.yml", ns)
	ro := readRollout(t, "canary.yml", ns)
	ro.Spec.Replicas = ptr.To[int32](2)
	ro.Spec.Strategy.Canary.Steps = []v1alpha1.CanaryStep{{SetWeight: ptr.To[int32](50)}, {Pause: &v1alpha1.RolloutPause{Duration: ptr.To(intstr.FromString("1s"))}}}
	ro.Spec.Strategy.Canary.Analysis = &v1alpha1.RolloutAnalysisBackground{
		RolloutAnalysis: v1alpha1.RolloutAnalysis{Templates: []v1alpha1.AnalysisTemplateRef{{TemplateName: "score"}}},
		StartingStep:    ptr.To[int32](1),
	}
	create(t, c, ro)
	waitFor(t, c, ro, "first revision Healthy", healthyAt)

	hash := setImage(t, c, ro, "argoproj/rollouts-demo:yellow")
	paused := waitFor(t, c, ro, "the inconclusive pause", func(ro *v1alpha1.Rollout) bool {
		return rollout.FindPause(&ro.Status, v1alpha1.PauseReasonInconclusiveAnalysis) != nil
	})
	runName := "canary-demo-" + hash + "-2"
	if s := paused.Status.Canary.CurrentBackgroundAnalysisRunStatus; s == nil || s.Name != runName || s.Status != v1alpha1.AnalysisPhaseInconclusive {
		t.Fatalf("currentBackgroundAnalysisRunStatus = %+v, want %s Inconclusive", s, runName)
	}
	if run := analysisRun(t, c, ns, runName); run.Labels[rollout.RunTypeLabel] != "Background" {
		t.Errorf("run labels %v, want rollout-type Background", run.Labels)
	}
	if paused.Status.Phase != v1alpha1.RolloutPhasePaused {
		t.Errorf("phase %s, want Paused", paused.Status.Phase)
	}
	// The inconclusive analysis holds the canary at its step, past the
	// pause step's 1 s: rollout.PlanCanaryProgress decides so ("an
	// Inconclusive analysis holds the canary at a pause step past its
	// duration"); here the pass that paused it holds it.
	held := waitFor(t, c, ro, "still paused", phaseIs(v1alpha1.RolloutPhasePaused))
	if step := ptr.Deref(held.Status.CurrentStepIndex, -1); step != 1 || held.Status.StableRS == hash {
		t.Errorf("step %d stable %s while the analysis was inconclusive, want step 1 and the old stable", step, held.Status.StableRS)
	}

	value.Store(20)
	promote(t, c, ro)
	done := waitFor(t, c, ro, "Healthy after the rerun", healthyAt)
	rerun := done.Status.Canary.CurrentBackgroundAnalysisRunStatus
	if rerun == nil || rerun.Name != runName+".1" || rerun.Status != v1alpha1.AnalysisPhaseSuccessful {
		t.Errorf("background run after promote = %+v, want %s.1 Successful", rerun, runName)
		t.Logf("runs: %v", runNames(t, c, ns))
	}
}

// A blue-green prePromotionAnalysis gates the switch: while its run has not
// passed the active Service stays on the old revision, a failed run aborts
// without the new revision ever taking traffic, and a template that does
// not exist is an InvalidSpec until it is created.
func TestBlueGreenPrePromotionAnalysisGatesTheSwitch(t *testing.T) {
	c := startController(t)
	ns := cluster.Namespace(t)
	value, url := webValue(t)
	value.Store(1)
	createServices(t, c, "rollout-service.yml", ns)
	ro := readRollout(t, "rollout-bg-test.yml", ns)
	ro.Spec.Strategy.BlueGreen.PrePromotionAnalysis = &v1alpha1.RolloutAnalysis{
		Templates: []v1alpha1.AnalysisTemplateRef{{TemplateName: "gate"}},
	}
	create(t, c, ro)
	first := waitFor(t, c, ro, "first revision Healthy", healthyAt).Status.CurrentPodHash

	second := setImage(t, c, ro, "nginx:stable")
	invalid := waitFor(t, c, ro, "InvalidSpec for the missing template", phaseIs(v1alpha1.RolloutPhaseDegraded))
	if want := `AnalysisTemplate 'gate' not found`; !strings.Contains(invalid.Status.Message, want) {
		t.Errorf("message = %q, want it to contain %q", invalid.Status.Message, want)
	}

	tmpl := &v1alpha1.AnalysisTemplate{}
	tmpl.Name, tmpl.Namespace = "gate", ns
	tmpl.Spec.Metrics = []v1alpha1.Metric{{
		Name:             "gate",
		SuccessCondition: "result == 1",
		Provider:         v1alpha1.MetricProvider{Web: &v1alpha1.WebMetric{URL: url, JSONPath: "{$.value}"}},
	}}
	create(t, c, tmpl)
	waitFor(t, c, ro, "Healthy after the analysis passed", healthyAt)
	if got := serviceHash(t, c, ns, "rollout-active-service"); got != second {
		t.Errorf("active Service selects %s, want %s", got, second)
	}
	if run := analysisRun(t, c, ns, "rollout-bg-test-"+second+"-2-pre"); run == nil || run.Status.Phase != v1alpha1.AnalysisPhaseSuccessful {
		t.Errorf("pre-promotion run = %+v, want Successful", run)
	}

	value.Store(0)
	third := setImage(t, c, ro, "nginx:1.19")
	degraded := waitFor(t, c, ro, "Degraded after the failed gate", func(ro *v1alpha1.Rollout) bool {
		if healthyAt(ro) {
			t.Fatalf("the third revision went live past a failing prePromotionAnalysis: pre=%+v runs=%v", ro.Status.BlueGreen.PrePromotionAnalysisRunStatus, runNames(t, c, ns))
		}
		return phaseIs(v1alpha1.RolloutPhaseDegraded)(ro)
	})
	if got := serviceHash(t, c, ns, "rollout-active-service"); got != second {
		t.Errorf("active Service selects %s after the failed gate, want %s", got, second)
	}
	if s := degraded.Status.BlueGreen.PrePromotionAnalysisRunStatus; s == nil || s.Name != "rollout-bg-test-"+third+"-3-pre" || s.Status != v1alpha1.AnalysisPhaseFailed {
		t.Errorf("prePromotionAnalysisRunStatus = %+v, want the revision 3 run Failed", s)
	}
	if first == second {
		t.Fatal("the image update did not change the pod template hash")
	}
}

// The progress deadline does not count while the update waits on an
// analysis step (Argo Rollouts #269): a 6 s analysis as the first step,
// where nothing else moves, under a 3 s deadline completes instead of
// ending Degraded.
func TestAnalysisStepHasNoProgressDeadline(t *testing.T) {
	c := startController(t)
	ns := cluster.Namespace(t)
	value, url := webValue(t)
	value.Store(1)
	tmpl := &v1alpha1.AnalysisTemplate{}
	tmpl.Name, tmpl.Namespace = "slow", ns
	tmpl.Spec.Metrics = []v1alpha1.Metric{{
		Name:             "slow",
		Interval:         "1s",
		Count:            ptr.To(intstr.FromInt32(7)),
		SuccessCondition: "result == 1",
		Provider:         v1alpha1.MetricProvider{Web: &v1alpha1.WebMetric{URL: url, JSONPath: "{$.value}"}},
	}}
	create(t, c, tmpl)
	createServices(t, c, "canary-services.yml", ns)
	ro := readRollout(t, "canary.yml", ns)
	ro.Spec.Replicas = ptr.To[int32](2)
	ro.Spec.ProgressDeadlineSeconds = ptr.To[int32](3)
	ro.Spec.Strategy.Canary.Steps = []v1alpha1.CanaryStep{
		{Analysis: &v1alpha1.RolloutAnalysis{Templates: []v1alpha1.AnalysisTemplateRef{{TemplateName: "slow"}}}},
	}
	create(t, c, ro)
	waitFor(t, c, ro, "first revision Healthy", healthyAt)
	hash := setImage(t, c, ro, "argoproj/rollouts-demo:yellow")
	done := waitFor(t, c, ro, "Healthy or Degraded", func(ro *v1alpha1.Rollout) bool {
		return healthyAt(ro) || phaseIs(v1alpha1.RolloutPhaseDegraded)(ro)
	})
	if done.Status.Phase != v1alpha1.RolloutPhaseHealthy {
		t.Fatalf("phase %s (%s), want Healthy: the deadline must not count during the analysis", done.Status.Phase, done.Status.Message)
	}
	run := analysisRun(t, c, ns, "canary-demo-"+hash+"-2-0")
	if run == nil || run.Status.Phase != v1alpha1.AnalysisPhaseSuccessful {
		t.Fatalf("step run = %+v, want Successful", run)
	}
	if res := run.Status.MetricResults; len(res) == 1 && len(res[0].Measurements) > 0 && run.Status.StartedAt != nil {
		last := res[0].Measurements[len(res[0].Measurements)-1]
		if last.FinishedAt != nil && last.FinishedAt.Sub(run.Status.StartedAt.Time) < 5*time.Second {
			t.Errorf("the analysis took %s, want longer than the 3 s deadline for the test to mean anything", last.FinishedAt.Sub(run.Status.StartedAt.Time))
		}
	}
}
