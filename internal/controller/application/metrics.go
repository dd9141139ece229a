package application

import (
	"cmp"
	"slices"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/skiffcd/skiff/api/v1alpha1"
	"github.com/skiffcd/skiff/internal/project"
	"github.com/skiffcd/skiff/internal/source"
	"github.com/skiffcd/skiff/internal/syncmap"
)

// The Application metrics carry Argo CD's names, types, labels and buckets
// (its controller/metrics), so Argo CD's dashboards and alerts work
// unchanged. Only what Argo CD has no name for is skiff_*.
var (
	syncTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "argocd_app_sync_total",
		Help: "Number of application syncs.",
	}, []string{"namespace", "name", "project", "dest_server", "phase", "dry_run"})
	reconcileSeconds = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "argocd_app_reconcile",
		Help:    "Application reconciliation performance in seconds.",
		Buckets: []float64{0.25, .5, 1, 2, 4, 8, 16},
	}, []string{"namespace", "dest_server"})
	comparisonsTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "skiff_app_comparisons_total",
		Help: "Application comparisons by outcome: computed (rendered, diffed, assessed) or reused (nothing they read had changed since the last one).",
	}, []string{"namespace", "outcome"})
	appInfo = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "argocd_app_info",
		Help: "Information about application.",
	}, appInfoLabelNames)
	clusterInfo = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "argocd_cluster_info",
		Help: "Information about cluster.",
	}, []string{"server", "k8s_version", "name"})
)

// appInfoLabelNames are argocd_app_info's labels, in appInfoLabels' order.
var appInfoLabelNames = []string{"namespace", "name", "project", "autosync_enabled", "repo",
	"dest_server", "dest_namespace", "sync_status", "health_status", "operation"}

func init() {
	metrics.Registry.MustRegister(syncTotal, reconcileSeconds, comparisonsTotal, appInfo, clusterInfo)
}

// appInfoLabels are the argocd_app_info label values of app, as Argo CD
// computes them: an empty status is Unknown; operation is "delete" while
// the app is being deleted, "sync" while a sync is requested or running.
// The repository URL is shown without credentials.
func appInfoLabels(app *v1alpha1.Application) []string {
	operation := ""
	switch {
	case app.DeletionTimestamp != nil:
		operation = "delete"
	case app.Operation != nil && app.Operation.Sync != nil:
		operation = "sync"
	}
	repo := ""
	if srcs := app.Spec.GetSources(); len(srcs) > 0 {
		repo = source.Redact(srcs[0].RepoURL)
	}
	return []string{app.Namespace, app.Name, app.ProjectName(),
		strconv.FormatBool(app.IsAutomated()), repo,
		destServer(app), app.Spec.Destination.Namespace,
		string(cmp.Or(app.Status.Sync.Status, v1alpha1.SyncStatusCodeUnknown)),
		string(cmp.Or(app.Status.Health.Status, v1alpha1.HealthStatusUnknown)),
		operation}
}

// destServer is the app's destination server; the local cluster given by
// name is its server URL, as Argo CD resolves it.
func destServer(app *v1alpha1.Application) string {
	d := app.Spec.Destination
	if d.Server == "" && d.Name == project.InClusterName {
		return project.InClusterServer
	}
	return d.Server
}

// appInfoSeries holds each app's current argocd_app_info label values by
// namespace/name, so that a change replaces the app's one series without
// scanning every app's (DeletePartialMatch made each comparison O(apps)).
var appInfoSeries syncmap.Map[string, []string]

// observeReconcile records a comparison's duration and the app's state
// after it.
func observeReconcile(app *v1alpha1.Application, took time.Duration) {
	reconcileSeconds.WithLabelValues(app.Namespace, destServer(app)).Observe(took.Seconds())
	observeAppInfo(app)
}

// observeAppInfo makes app's argocd_app_info series the one of its current
// labels.
func observeAppInfo(app *v1alpha1.Application) {
	labels := appInfoLabels(app)
	if prev, ok := appInfoSeries.Swap(app.Namespace+"/"+app.Name, labels); ok && !slices.Equal(prev, labels) {
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

// forgetAppInfo drops the argocd_app_info series of a deleted app.
func forgetAppInfo(namespace, name string) {
	if prev, ok := appInfoSeries.LoadAndDelete(namespace + "/" + name); ok {
		appInfo.DeleteLabelValues(prev...)
	}
}

// observeSync counts a completed sync operation and records the app's
// state after it (its operation is over).
func observeSync(app *v1alpha1.Application, phase v1alpha1.OperationPhase, dryRun bool) {
	syncTotal.WithLabelValues(app.Namespace, app.Name, app.ProjectName(), destServer(app),
		string(phase), strconv.FormatBool(dryRun)).Inc()
	observeAppInfo(app)
}

// ReportCluster sets argocd_cluster_info of the one cluster Skiff deploys
// to, the local one, named as Argo CD names it; version is its Kubernetes
// major.minor, as Argo CD shows it.
func ReportCluster(version string) {
	clusterInfo.Reset()
	clusterInfo.WithLabelValues(project.InClusterServer, version, project.InClusterName).Set(1)
}
