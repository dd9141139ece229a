package provider

import (
	"context"
	"fmt"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/skiffcd/skiff/api/v1alpha1"
	"github.com/skiffcd/skiff/internal/analysis"
)

// Labels, annotations and measurement metadata Argo Rollouts puts on
// analysis Jobs.
const (
	LabelAnalysisRunUID       = "analysisrun.argoproj.io/uid"
	AnnotationAnalysisRunName = "analysisrun.argoproj.io/name"
	AnnotationMetricName      = "analysisrun.argoproj.io/metric-name"
	MetadataJobName           = "job-name"
	MetadataJobNamespace      = "job-namespace"
	jobCallTimeout            = 30 * time.Second
)

// Job measures a metric by running a Kubernetes Job owned by the run: the
// measurement succeeds when the Job completes and fails when it fails.
type Job struct {
	Client client.Client
	Now    func() time.Time
	Poll   time.Duration
}

// JobName is the name Argo Rollouts gives the Job of a measurement:
// <run uid>.<metric name>.<measurement number>.
func JobName(run *v1alpha1.AnalysisRun, metricName string) string {
	n := int32(1)
	for _, r := range run.Status.MetricResults {
		if r.Name == metricName {
			n = r.Count + r.Error + 1
		}
	}
	return fmt.Sprintf("%s.%s.%d", run.UID, metricName, n)
}

// Run creates the measurement's Job; a Job of that name left by an earlier
// pass whose status write was lost is adopted.
func (j *Job) Run(ctx context.Context, run *v1alpha1.AnalysisRun, metric v1alpha1.Metric) v1alpha1.Measurement {
	m := started(j.Now())
	ctx, cancel := context.WithTimeout(ctx, jobCallTimeout)
	defer cancel()
	job := newJob(run, metric)
	m.Metadata = map[string]string{MetadataJobName: job.Name, MetadataJobNamespace: job.Namespace}
	err := j.Client.Create(ctx, job)
	if apierrors.IsAlreadyExists(err) {
		err = j.Client.Get(ctx, client.ObjectKeyFromObject(job), job)
	}
	if err != nil {
		return analysis.Finish(m, v1alpha1.AnalysisPhaseError, fmt.Sprintf("job metric: creating Job %s: %v", job.Name, err), j.Now())
	}
	return j.assess(m, job)
}

func newJob(run *v1alpha1.AnalysisRun, metric v1alpha1.Metric) *batchv1.Job {
	cfg := metric.Provider.Job
	labels := map[string]string{}
	for k, v := range cfg.Metadata.Labels {
		labels[k] = v
	}
	labels[LabelAnalysisRunUID] = string(run.UID)
	annotations := map[string]string{}
	for k, v := range cfg.Metadata.Annotations {
		annotations[k] = v
	}
	annotations[AnnotationAnalysisRunName] = run.Name
	annotations[AnnotationMetricName] = metric.Name
	isController := true
	return &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{
			Name:        JobName(run, metric.Name),
			Namespace:   run.Namespace,
			Labels:      labels,
			Annotations: annotations,
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: v1alpha1.GroupVersion.String(), Kind: "AnalysisRun",
				Name: run.Name, UID: run.UID, Controller: &isController,
			}},
		},
		Spec: *cfg.Spec.DeepCopy(),
	}
}

// Resume reads the Job again.
func (j *Job) Resume(ctx context.Context, _ *v1alpha1.AnalysisRun, _ v1alpha1.Metric, m v1alpha1.Measurement) v1alpha1.Measurement {
	ctx, cancel := context.WithTimeout(ctx, jobCallTimeout)
	defer cancel()
	job := &batchv1.Job{}
	key := client.ObjectKey{Namespace: m.Metadata[MetadataJobNamespace], Name: m.Metadata[MetadataJobName]}
	if err := j.Client.Get(ctx, key, job); err != nil {
		return analysis.Finish(m, v1alpha1.AnalysisPhaseError, fmt.Sprintf("job metric: reading Job %s: %v", key.Name, err), j.Now())
	}
	return j.assess(m, job)
}

// Terminate deletes the Job of a measurement the run no longer waits for.
func (j *Job) Terminate(ctx context.Context, _ *v1alpha1.AnalysisRun, _ v1alpha1.Metric, m v1alpha1.Measurement) v1alpha1.Measurement {
	ctx, cancel := context.WithTimeout(ctx, jobCallTimeout)
	defer cancel()
	job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: m.Metadata[MetadataJobNamespace], Name: m.Metadata[MetadataJobName]}}
	err := j.Client.Delete(ctx, job, client.PropagationPolicy(metav1.DeletePropagationBackground))
	if err != nil && !apierrors.IsNotFound(err) {
		return analysis.Finish(m, v1alpha1.AnalysisPhaseError, fmt.Sprintf("job metric: deleting Job %s: %v", job.Name, err), j.Now())
	}
	return analysis.Finish(m, v1alpha1.AnalysisPhaseSuccessful, "Metric Terminated", j.Now())
}

// assess maps the Job's conditions to the measurement.
func (j *Job) assess(m v1alpha1.Measurement, job *batchv1.Job) v1alpha1.Measurement {
	for _, c := range job.Status.Conditions {
		if c.Status != corev1.ConditionTrue {
			continue
		}
		switch c.Type {
		case batchv1.JobComplete:
			return analysis.Finish(m, v1alpha1.AnalysisPhaseSuccessful, "", j.Now())
		case batchv1.JobFailed:
			return analysis.Finish(m, v1alpha1.AnalysisPhaseFailed, fmt.Sprintf("Job %s failed: %s %s", job.Name, c.Reason, c.Message), j.Now())
		}
	}
	resume := metav1.NewTime(j.Now().Add(j.Poll))
	m.Phase, m.ResumeAt = v1alpha1.AnalysisPhaseRunning, &resume
	return m
}
