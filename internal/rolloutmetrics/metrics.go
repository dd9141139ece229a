package rolloutmetrics

import (
	"context"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/skiffcd/skiff/api/v1alpha1"
	"github.com/skiffcd/skiff/internal/analysis"
	"github.com/skiffcd/skiff/internal/rollout"
)

var namespaceName = []string{"namespace", "name"}

func withNamespaceName(labels ...string) []string {
	return append(append([]string{}, namespaceName...), labels...)
}

// Info gauges, computed at each scrape (collector).
var (
	descRolloutInfo = prometheus.NewDesc("rollout_info", "Information about rollout.",
		withNamespaceName("strategy", "traffic_router", "phase"), nil)
	descReplicasAvailable = prometheus.NewDesc("rollout_info_replicas_available",
		"The number of available replicas per rollout.", namespaceName, nil)
	descReplicasUnavailable = prometheus.NewDesc("rollout_info_replicas_unavailable",
		"The number of unavailable replicas per rollout.", namespaceName, nil)
	descReplicasDesired = prometheus.NewDesc("rollout_info_replicas_desired",
		"The number of desired replicas per rollout.", namespaceName, nil)
	descReplicasUpdated = prometheus.NewDesc("rollout_info_replicas_updated",
		"The number of updated replicas per rollout.", namespaceName, nil)
	// Deprecated by Argo Rollouts for rollout_info; dashboards still use it.
	descRolloutPhase = prometheus.NewDesc("rollout_phase",
		"Information on the state of the rollout (DEPRECATED - use rollout_info)",
		withNamespaceName("strategy", "phase"), nil)

	descRunInfo = prometheus.NewDesc("analysis_run_info", "Information about analysis run.",
		withNamespaceName("phase"), nil)
	// Deprecated by Argo Rollouts for analysis_run_info.
	descRunPhase = prometheus.NewDesc("analysis_run_phase",
		"Information on the state of the Analysis Run (DEPRECATED - use analysis_run_info)",
		withNamespaceName("phase"), nil)
	descRunMetricType = prometheus.NewDesc("analysis_run_metric_type",
		"Information on the type of a specific metric in the Analysis Runs",
		withNamespaceName("metric", "type"), nil)
	descRunMetricPhase = prometheus.NewDesc("analysis_run_metric_phase",
		"Information on the duration of a specific metric in the Analysis Run",
		withNamespaceName("metric", "type", "dry_run", "phase"), nil)
)

// analysisPhases are the phases analysis_run_phase and
// analysis_run_metric_phase have one series each of.
var analysisPhases = []v1alpha1.AnalysisPhase{v1alpha1.AnalysisPhasePending, v1alpha1.AnalysisPhaseError,
	v1alpha1.AnalysisPhaseFailed, v1alpha1.AnalysisPhaseSuccessful, v1alpha1.AnalysisPhaseRunning,
	v1alpha1.AnalysisPhaseInconclusive}

// Reconciles times the passes of one controller and counts their errors,
// by object.
type Reconciles struct {
	seconds *prometheus.HistogramVec
	errors  *prometheus.CounterVec
}

// Observe records a pass over the object key that took took and ended
// with err.
func (r *Reconciles) Observe(key client.ObjectKey, took time.Duration, err error) {
	r.seconds.WithLabelValues(key.Namespace, key.Name).Observe(took.Seconds())
	if err != nil {
		r.errors.WithLabelValues(key.Namespace, key.Name).Inc()
	}
}

// Forget drops the series of a deleted object.
func (r *Reconciles) Forget(key client.ObjectKey) {
	r.seconds.DeleteLabelValues(key.Namespace, key.Name)
	r.errors.DeleteLabelValues(key.Namespace, key.Name)
}

func newReconciles(prefix, what string) *Reconciles {
	return &Reconciles{
		seconds: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    prefix,
			Help:    what + " reconciliation performance.",
			Buckets: []float64{0.01, 0.15, .25, .5, 1},
		}, namespaceName),
		errors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: prefix + "_error",
			Help: "Error occurring during the " + what,
		}, namespaceName),
	}
}

var (
	// Rollouts are the Rollout controller's passes (rollout_reconcile,
	// rollout_reconcile_error).
	Rollouts = newReconciles("rollout_reconcile", "Rollout")
	// AnalysisRuns are the AnalysisRun controller's passes
	// (analysis_run_reconcile, analysis_run_reconcile_error).
	AnalysisRuns = newReconciles("analysis_run_reconcile", "Analysis Run")
)

func init() {
	metrics.Registry.MustRegister(Rollouts.seconds, Rollouts.errors,
		AnalysisRuns.seconds, AnalysisRuns.errors, objects)
}

// objects is the collector of the info gauges.
var objects = &collector{}

// Serve makes the info gauges read Rollouts and AnalysisRuns from reader
// (a cache) while elected is closed: only the replica that runs the
// controllers reports them, as only Argo Rollouts' leader does.
func Serve(reader client.Reader, elected <-chan struct{}) {
	objects.source.Store(&source{reader: reader, elected: elected})
}

type source struct {
	reader  client.Reader
	elected <-chan struct{}
}

type collector struct {
	source atomic.Pointer[source]
}

// listTimeout bounds a scrape's reads of the cache.
const listTimeout = 10 * time.Second

// Describe implements prometheus.Collector.
func (c *collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descRolloutInfo, descReplicasAvailable, descReplicasUnavailable,
		descReplicasDesired, descReplicasUpdated, descRolloutPhase,
		descRunInfo, descRunPhase, descRunMetricType, descRunMetricPhase} {
		ch <- d
	}
}

// Collect implements prometheus.Collector. A list that fails leaves its
// kind out of the scrape.
func (c *collector) Collect(ch chan<- prometheus.Metric) {
	src := c.source.Load()
	if src == nil {
		return
	}
	select {
	case <-src.elected:
	default:
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), listTimeout)
	defer cancel()
	var rollouts v1alpha1.RolloutList
	if err := src.reader.List(ctx, &rollouts); err == nil {
		for i := range rollouts.Items {
			collectRollout(ch, &rollouts.Items[i])
		}
	}
	var runs v1alpha1.AnalysisRunList
	if err := src.reader.List(ctx, &runs); err == nil {
		for i := range runs.Items {
			collectAnalysisRun(ch, &runs.Items[i])
		}
	}
}

func gauge(ch chan<- prometheus.Metric, desc *prometheus.Desc, v float64, labels ...string) {
	ch <- prometheus.MustNewConstMetric(desc, prometheus.GaugeValue, v, labels...)
}

func oneIf(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

func collectRollout(ch chan<- prometheus.Metric, ro *v1alpha1.Rollout) {
	ns, name := ro.Namespace, ro.Name
	strategy, phase := Strategy(ro), RolloutPhase(ro)
	gauge(ch, descRolloutInfo, 1, ns, name, strategy, TrafficRouter(ro), phase)
	st := ro.Status
	gauge(ch, descReplicasAvailable, float64(st.AvailableReplicas), ns, name)
	gauge(ch, descReplicasUnavailable, float64(st.Replicas-st.AvailableReplicas), ns, name)
	gauge(ch, descReplicasDesired, float64(rollout.Replicas(ro)), ns, name)
	gauge(ch, descReplicasUpdated, float64(st.UpdatedReplicas), ns, name)
	for _, p := range rolloutPhases {
		gauge(ch, descRolloutPhase, oneIf(p == phase), ns, name, strategy, p)
	}
}

func collectAnalysisRun(ch chan<- prometheus.Metric, run *v1alpha1.AnalysisRun) {
	ns, name := run.Namespace, run.Name
	phase := run.Status.Phase
	gauge(ch, descRunInfo, 1, ns, name, string(phase))
	if phase == "" {
		phase = v1alpha1.AnalysisPhasePending
	}
	for _, p := range analysisPhases {
		gauge(ch, descRunPhase, oneIf(p == phase), ns, name, string(p))
	}
	for _, metric := range run.Spec.Metrics {
		typ := MetricType(metric)
		dryRun := strconv.FormatBool(analysis.IsDryRun(run.Spec.DryRun, metric.Name))
		gauge(ch, descRunMetricType, 1, ns, name, metric.Name, typ)
		current := metricPhase(run, metric.Name)
		for _, p := range analysisPhases {
			gauge(ch, descRunMetricPhase, oneIf(p == current), ns, name, metric.Name, typ, dryRun, string(p))
		}
	}
}
