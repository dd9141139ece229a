// Package analysis is the AnalysisRun controller: it takes each metric's
// measurements on its schedule through the providers, judges them with the
// pure rules of internal/analysis, and writes the run's status where Argo
// Rollouts writes it, once per pass. Finished runs are left alone but for
// their ttlStrategy.
package analysis

import (
	"context"
	"fmt"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/skiffcd/skiff/api/v1alpha1"
	"github.com/skiffcd/skiff/internal/analysis"
	"github.com/skiffcd/skiff/internal/analysis/provider"
	"github.com/skiffcd/skiff/internal/rolloutmetrics"
)

// Reason prefixes the run message when the run cannot be measured at all.
type Reason string

// Reasons a run ends in Error before any measurement.
const (
	ReasonArgsUnresolved Reason = "ArgsUnresolved"
	ReasonInvalidSpec    Reason = "InvalidSpec"
)

// Reconciler runs AnalysisRuns in every namespace.
type Reconciler struct {
	// Client reads AnalysisRuns (cached) and writes their status.
	Client client.Client
	// APIReader reads Secrets for secretKeyRef args on demand, so no
	// cluster-wide Secret informer is needed.
	APIReader client.Reader
	// Providers take the measurements.
	Providers *provider.Factory
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// ErrorRetry is how soon an Error measurement is retried when the
	// metric's interval is longer; default analysis.DefaultErrorRetryInterval.
	ErrorRetry time.Duration
	// Workers sizes the work queue; default 10.
	Workers int
}

func (r *Reconciler) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}

// SetupWithManager registers the controller; Jobs of job metrics wake
// their run when they change.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	if r.Workers == 0 {
		r.Workers = 10
	}
	if r.Providers == nil {
		r.Providers = &provider.Factory{Client: r.Client, Now: r.Now}
	}
	err := ctrl.NewControllerManagedBy(mgr).
		Named("analysisrun").
		// Our own status writes do not bump the generation; the schedule
		// requeues instead.
		For(&v1alpha1.AnalysisRun{}, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Owns(&batchv1.Job{}).
		WithOptions(controller.Options{MaxConcurrentReconciles: r.Workers}).
		Complete(r)
	if err != nil {
		return fmt.Errorf("setting up the AnalysisRun controller: %w", err)
	}
	return nil
}

// Reconcile takes the measurements that are due and writes the status.
// Passes over runs still measuring are timed and their errors counted
// (analysis_run_reconcile, analysis_run_reconcile_error); a deleted run's
// series go.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	start := r.now()
	run := &v1alpha1.AnalysisRun{}
	if err := r.Client.Get(ctx, req.NamespacedName, run); err != nil {
		if apierrors.IsNotFound(err) {
			rolloutmetrics.AnalysisRuns.Forget(req.NamespacedName)
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if run.Status.Phase.Completed() {
		return r.expire(ctx, run)
	}
	res, err := r.advance(ctx, run)
	rolloutmetrics.AnalysisRuns.Observe(req.NamespacedName, r.now().Sub(start), err)
	return res, err
}

// advance takes the measurements that are due and writes run's status
// when they changed it.
func (r *Reconciler) advance(ctx context.Context, run *v1alpha1.AnalysisRun) (ctrl.Result, error) {
	updated := run.DeepCopy()
	requeue := r.pass(ctx, updated)
	if !equality.Semantic.DeepEqual(run.Status, updated.Status) {
		if err := r.Client.Status().Update(ctx, updated); err != nil {
			return ctrl.Result{}, fmt.Errorf("writing the status of AnalysisRun %s/%s: %w", run.Namespace, run.Name, err)
		}
	}
	if updated.Status.Phase.Completed() {
		return r.expire(ctx, updated)
	}
	return ctrl.Result{RequeueAfter: requeue}, nil
}

// expire deletes a finished run whose ttlStrategy has run out, or wakes up
// when it will; a finished run is otherwise left alone.
func (r *Reconciler) expire(ctx context.Context, run *v1alpha1.AnalysisRun) (ctrl.Result, error) {
	at, ok := analysis.ExpiresAt(run)
	if !ok {
		return ctrl.Result{}, nil
	}
	if wait := at.Sub(r.now()); wait > 0 {
		return ctrl.Result{RequeueAfter: wait}, nil
	}
	if err := r.Client.Delete(ctx, run); client.IgnoreNotFound(err) != nil {
		return ctrl.Result{}, fmt.Errorf("deleting expired AnalysisRun %s/%s: %w", run.Namespace, run.Name, err)
	}
	return ctrl.Result{}, nil
}

// pass advances run in memory and returns when it needs attention again.
func (r *Reconciler) pass(ctx context.Context, run *v1alpha1.AnalysisRun) time.Duration {
	now := r.now()
	if run.Status.StartedAt == nil {
		t := metav1.NewTime(now)
		run.Status.StartedAt = &t
	}
	args, err := analysis.ResolveArgs(run.Spec.Args, r.secretReader(ctx, run.Namespace))
	if err != nil {
		r.fail(run, ReasonArgsUnresolved, args.Mask(err.Error()), now)
		return 0
	}
	metrics := make([]v1alpha1.Metric, len(run.Spec.Metrics))
	for i, m := range run.Spec.Metrics {
		if metrics[i], err = analysis.SubstituteMetric(m, args.Values); err != nil {
			r.fail(run, ReasonInvalidSpec, args.Mask(err.Error()), now)
			return 0
		}
	}
	// Judge the run with the metrics as measured.
	judged := run.DeepCopy()
	judged.Spec.Metrics = metrics

	terminating := analysis.IsTerminating(judged)
	for _, metric := range metrics {
		result := resultFor(judged, metric.Name)
		step, err := analysis.NextStep(metric, result, run.Status.StartedAt.Time, now, terminating, r.ErrorRetry)
		if err != nil {
			r.fail(run, ReasonInvalidSpec, fmt.Sprintf("metric %q: %v", metric.Name, err), now)
			return 0
		}
		switch step.Action {
		case analysis.Measure:
			analysis.Record(result, r.measure(ctx, judged, metric, args), false)
		case analysis.Resume:
			analysis.Record(result, r.resume(ctx, judged, metric, *lastMeasurement(result), terminating, args), true)
		}
	}

	verdict := r.assess(judged)
	if analysis.IsTerminating(judged) {
		// A metric just failed, or terminate was asked: stop what is still
		// in flight now rather than on a later pass of a finished run.
		for _, metric := range metrics {
			result := resultFor(judged, metric.Name)
			if last := lastMeasurement(result); last != nil && !last.Phase.Completed() {
				analysis.Record(result, r.resume(ctx, judged, metric, *last, true, args), true)
			}
		}
		verdict = r.assess(judged)
	}
	for i := range judged.Status.MetricResults {
		res := &judged.Status.MetricResults[i]
		res.Measurements = analysis.TrimMeasurements(res.Measurements, analysis.RetentionLimit(run.Spec.MeasurementRetention, res.Name))
	}
	run.Status.MetricResults = judged.Status.MetricResults
	run.Status.Phase = verdict.Phase
	run.Status.Message = args.Mask(verdict.Message)
	run.Status.RunSummary = verdict.Summary
	run.Status.DryRunSummary = verdict.DryRunSummary
	if verdict.Phase.Completed() {
		t := metav1.NewTime(now)
		run.Status.CompletedAt = &t
		return 0
	}
	return r.nextWake(judged, metrics, now)
}

// assess applies the pure verdict to every metric result of run.
func (r *Reconciler) assess(run *v1alpha1.AnalysisRun) analysis.RunVerdict {
	verdict := analysis.AssessRun(run)
	for i := range run.Status.MetricResults {
		res := &run.Status.MetricResults[i]
		if phase, ok := verdict.MetricPhases[res.Name]; ok {
			res.Phase = phase
		}
		res.Message = verdict.MetricMessages[res.Name]
		if last := lastMeasurement(res); last != nil && last.Message != "" && res.Phase != v1alpha1.AnalysisPhaseSuccessful {
			res.Message = last.Message
		}
	}
	return verdict
}

func (r *Reconciler) measure(ctx context.Context, run *v1alpha1.AnalysisRun, metric v1alpha1.Metric, args analysis.ResolvedArgs) v1alpha1.Measurement {
	p, err := r.Providers.For(metric)
	if err != nil {
		t := metav1.NewTime(r.now())
		return analysis.Finish(v1alpha1.Measurement{StartedAt: &t}, v1alpha1.AnalysisPhaseError, err.Error(), r.now())
	}
	return masked(p.Run(ctx, run, metric), args)
}

func (r *Reconciler) resume(ctx context.Context, run *v1alpha1.AnalysisRun, metric v1alpha1.Metric, m v1alpha1.Measurement, terminating bool, args analysis.ResolvedArgs) v1alpha1.Measurement {
	p, err := r.Providers.For(metric)
	if err != nil {
		return analysis.Finish(m, v1alpha1.AnalysisPhaseError, err.Error(), r.now())
	}
	if terminating {
		return masked(p.Terminate(ctx, run, metric, m), args)
	}
	return masked(p.Resume(ctx, run, metric, m), args)
}

// masked hides Secret argument values that a provider echoed back.
func masked(m v1alpha1.Measurement, args analysis.ResolvedArgs) v1alpha1.Measurement {
	m.Message, m.Value = args.Mask(m.Message), args.Mask(m.Value)
	return m
}

// nextWake is the soonest any metric needs attention; a metric due now
// (the previous measurement just completed) is looked at again at once.
func (r *Reconciler) nextWake(run *v1alpha1.AnalysisRun, metrics []v1alpha1.Metric, now time.Time) time.Duration {
	terminating := analysis.IsTerminating(run)
	var wake time.Duration
	for _, metric := range metrics {
		step, err := analysis.NextStep(metric, resultFor(run, metric.Name), run.Status.StartedAt.Time, now, terminating, r.ErrorRetry)
		if err != nil {
			continue
		}
		after := step.After
		if step.Action != analysis.Wait {
			after = time.Millisecond
		}
		if after > 0 && (wake == 0 || after < wake) {
			wake = after
		}
	}
	return wake
}

// fail ends a run that cannot be measured.
func (r *Reconciler) fail(run *v1alpha1.AnalysisRun, reason Reason, message string, now time.Time) {
	t := metav1.NewTime(now)
	run.Status.Phase = v1alpha1.AnalysisPhaseError
	run.Status.Message = fmt.Sprintf("%s: %s", reason, message)
	run.Status.CompletedAt = &t
}

func (r *Reconciler) secretReader(ctx context.Context, namespace string) analysis.SecretReader {
	return func(name, key string) (string, error) {
		secret := &corev1.Secret{}
		if err := r.APIReader.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, secret); err != nil {
			if apierrors.IsNotFound(err) {
				return "", fmt.Errorf("secret %q not found", name)
			}
			return "", err
		}
		v, ok := secret.Data[key]
		if !ok {
			return "", fmt.Errorf("secret %q has no key %q", name, key)
		}
		return string(v), nil
	}
}

// resultFor returns the run's result of a metric, adding a Pending one.
func resultFor(run *v1alpha1.AnalysisRun, name string) *v1alpha1.MetricResult {
	for i := range run.Status.MetricResults {
		if run.Status.MetricResults[i].Name == name {
			return &run.Status.MetricResults[i]
		}
	}
	run.Status.MetricResults = append(run.Status.MetricResults, v1alpha1.MetricResult{
		Name: name, Phase: v1alpha1.AnalysisPhasePending, DryRun: analysis.IsDryRun(run.Spec.DryRun, name),
	})
	return &run.Status.MetricResults[len(run.Status.MetricResults)-1]
}

func lastMeasurement(result *v1alpha1.MetricResult) *v1alpha1.Measurement {
	if result == nil || len(result.Measurements) == 0 {
		return nil
	}
	return &result.Measurements[len(result.Measurements)-1]
}

var _ reconcile.Reconciler = &Reconciler{}
