package application

import (
	"slices"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/skiffcd/skiff/api/v1alpha1"
	"github.com/skiffcd/skiff/internal/syncmap"
)

var (
	syncTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "skiff_app_sync_total",
		Help: "Sync operations by application and result phase.",
	}, []string{"name", "namespace", "project", "phase"})
	reconcileSeconds = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "skiff_app_reconcile_duration_seconds",
		Help:    "Duration of application comparisons.",
		Buckets: []float64{0.01, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30},
	}, []string{"namespace"})
	comparisonsTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "skiff_app_comparisons_total",
		Help: "Application comparisons by outcome: computed (rendered, diffed, assessed) or reused (nothing they read had changed since the last one).",
	}, []string{"namespace", "outcome"})
	appInfo = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "skiff_app_info",
		Help: "Information about each application; the value is always 1.",
	}, []string{"name", "namespace", "project", "sync_status", "health_status", "repo"})
)

func init() {
	metrics.Registry.MustRegister(syncTotal, reconcileSeconds, comparisonsTotal, appInfo)
}

// appInfoLabels holds each app's current skiff_app_info label values by
// namespace/name, so that a change replaces the app's one series without
// scanning every app's (DeletePartialMatch made each comparison O(apps)).
var appInfoLabels syncmap.Map[string, []string]

func observeReconcile(app *v1alpha1.Application, took time.Duration) {
	reconcileSeconds.WithLabelValues(app.Namespace).Observe(took.Seconds())
	repo := ""
	if srcs := app.Spec.GetSources(); len(srcs) > 0 {
		repo = srcs[0].RepoURL
	}
	labels := []string{app.Name, app.Namespace, app.ProjectName(),
		string(app.Status.Sync.Status), string(app.Status.Health.Status), repo}
	if prev, ok := appInfoLabels.Swap(app.Namespace+"/"+app.Name, labels); ok && !slices.Equal(prev, labels) {
		appInfo.DeleteLabelValues(prev...)
	}
	appInfo.WithLabelValues(labels...).Set(1)
}

// Outcomes of comparisons (skiff_app_comparisons_total).
const (
	comparisonComputed = "computed"
	comparisonReused   = "reused"
)

func observeComparison(app *v1alpha1.Application, outcome string) {
	comparisonsTotal.WithLabelValues(app.Namespace, outcome).Inc()
}

// forgetAppInfo drops the skiff_app_info series of a deleted app.
func forgetAppInfo(namespace, name string) {
	if prev, ok := appInfoLabels.LoadAndDelete(namespace + "/" + name); ok {
		appInfo.DeleteLabelValues(prev...)
	}
}

func observeSync(app *v1alpha1.Application, phase v1alpha1.OperationPhase) {
	syncTotal.WithLabelValues(app.Name, app.Namespace, app.ProjectName(), string(phase)).Inc()
}
