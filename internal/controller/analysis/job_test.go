package analysis

import (
	"context"
	"errors"
	"os"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/skiffcd/skiff/api/v1alpha1"
	"github.com/skiffcd/skiff/internal/analysis"
	"github.com/skiffcd/skiff/internal/analysis/provider"
	"github.com/skiffcd/skiff/internal/testwait"
)

// The seeds' Job template, made into a run by NewRun as the Rollout
// controller will: kwok runs the Job's pod to completion, so the run
// succeeds, with the Job named and owned as Argo Rollouts does.
func TestJobMetricFromTheSeedsTemplateSucceeds(t *testing.T) {
	c := startController(t)
	ns := cluster.Namespace(t)
	data, err := os.ReadFile("testdata/test-analysistemp.yml")
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &v1alpha1.AnalysisTemplate{}
	if err := yaml.UnmarshalStrict(data, tmpl); err != nil {
		t.Fatal(err)
	}
	run, err := analysis.NewRun([]*v1alpha1.AnalysisTemplate{tmpl}, nil, nil, "job-check", ns, map[string]string{"app": "test"})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Create(context.Background(), run); err != nil {
		t.Fatal(err)
	}
	got := waitForRun(t, c, run, "the run to complete", completed)
	if got.Status.Phase != v1alpha1.AnalysisPhaseSuccessful {
		t.Fatalf("run phase = %s (%s), want Successful", got.Status.Phase, got.Status.Message)
	}
	res := result(t, got, "test-analysis")
	if res.Successful != 1 || len(res.Measurements) != 1 {
		t.Fatalf("metric result %+v, want one successful measurement", res)
	}
	m := res.Measurements[0]
	wantName := string(got.UID) + ".test-analysis.1"
	if m.Metadata[provider.MetadataJobName] != wantName || m.Metadata[provider.MetadataJobNamespace] != ns {
		t.Errorf("measurement metadata %v, want job-name %s in %s", m.Metadata, wantName, ns)
	}
	job := &batchv1.Job{}
	if err := c.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: wantName}, job); err != nil {
		t.Fatal(err)
	}
	if owner := job.OwnerReferences; len(owner) != 1 || owner[0].UID != got.UID || owner[0].Controller == nil || !*owner[0].Controller {
		t.Errorf("job owners %+v, want the AnalysisRun as controller", owner)
	}
}

// A Job whose pod can never be scheduled passes its deadline and fails;
// the run fails with it.
func TestJobMetricFailsWhenTheJobFails(t *testing.T) {
	c := startController(t)
	ns := cluster.Namespace(t)
	run := readRun(t, "failing-job-run.yaml", ns)
	if err := c.Create(context.Background(), run); err != nil {
		t.Fatal(err)
	}
	got := waitForRun(t, c, run, "the run to fail", completed)
	if got.Status.Phase != v1alpha1.AnalysisPhaseFailed {
		t.Fatalf("run phase = %s (%s), want Failed", got.Status.Phase, got.Status.Message)
	}
	res := result(t, got, "unschedulable")
	if m := res.Measurements[0]; m.Phase != v1alpha1.AnalysisPhaseFailed || m.Message == "" {
		t.Errorf("measurement %+v, want Failed with the Job's reason", m)
	}
}

// Terminating a run whose Job still runs deletes the Job; the run ends
// Successful with "Run Terminated".
func TestTerminateDeletesARunningJob(t *testing.T) {
	c := startController(t)
	ns := cluster.Namespace(t)
	run := readRun(t, "hanging-job-run.yaml", ns)
	if err := c.Create(context.Background(), run); err != nil {
		t.Fatal(err)
	}
	got := waitForRun(t, c, run, "the Job to start", func(r *v1alpha1.AnalysisRun) bool {
		return len(r.Status.MetricResults) == 1 && len(r.Status.MetricResults[0].Measurements) == 1 &&
			r.Status.MetricResults[0].Measurements[0].Phase == v1alpha1.AnalysisPhaseRunning
	})
	jobName := got.Status.MetricResults[0].Measurements[0].Metadata[provider.MetadataJobName]
	patch := client.RawPatch("application/merge-patch+json", []byte(`{"spec":{"terminate":true}}`))
	if err := c.Patch(context.Background(), run, patch); err != nil {
		t.Fatal(err)
	}
	got = waitForRun(t, c, run, "the run to end", completed)
	if got.Status.Phase != v1alpha1.AnalysisPhaseSuccessful || got.Status.Message != "Run Terminated" {
		t.Errorf("run %s (%q), want Successful with Run Terminated", got.Status.Phase, got.Status.Message)
	}
	testwait.Eventually(t, "Job "+jobName+" to be deleted", func() error {
		job := &batchv1.Job{}
		err := c.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: jobName}, job)
		switch {
		case apierrors.IsNotFound(err):
			return nil
		case err != nil:
			return err
		case job.DeletionTimestamp == nil:
			return errors.New("the Job is not being deleted")
		}
		return nil
	}, testwait.Timeout(60*time.Second))
}
