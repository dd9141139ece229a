package application

import (
	"cmp"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/skiffcd/skiff/api/v1alpha1"
	"github.com/skiffcd/skiff/internal/project"
	"github.com/skiffcd/skiff/internal/source"
)

// The Application metrics carry Argo CD's names, types, labels and buckets
// (its controller/metrics), so Argo CD's dashboards and alerts work
// unchanged. Only what Argo CD has no name for is skiff_*.
var (
	syncTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "argocd_app_sync_total",
		Help: "Number of application syncs.",
	}, []string{"namespace", "name", "project", "dest_server", "phase", "dry_run"})
	syncSeconds = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "argocd_app_sync_duration_seconds_total",
		Help: "Application sync performance in seconds total.",
	}, []string{"namespace", "name", "project", "dest_server"})
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
	appConditions = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "argocd_app_condition",
		Help: "Report application conditions.",
	}, []string{"namespace", "name", "project", "condition"})
	clusterInfo = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "argocd_cluster_info",
		Help: "Information about cluster.",
	}, []string{"server", "k8s_version", "name"})
)

// appInfoLabelNames are argocd_app_info's labels, in appInfoLabels' order.
var appInfoLabelNames = []string{"namespace", "name", "project", "autosync_enabled", "repo",
	"dest_server", "dest_namespace", "sync_status", "health_status", "operation"}

func init() {
	metrics.Registry.MustRegister(syncTotal, syncSeconds, reconcileSeconds, comparisonsTotal, appInfo, appConditions, clusterInfo)
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

// appSeries holds each app's current argocd_app_info label values and
// argocd_app_condition series by namespace/name, so that a change replaces
// the app's series without scanning every app's (DeletePartialMatch made
// each comparison O(apps)). The comparison and operation workers both
// update an app's series: appSeriesMu makes each replacement whole, so a
// replaced series cannot outlive it.
var (
	appSeriesMu sync.Mutex
	appSeries   = map[string]appSeriesLabels{}
)

type appSeriesLabels struct {
	info       []string
	conditions map[string]float64 // condition type → count
	project    string
}

// conditionCounts counts app's conditions by type, as argocd_app_condition
// reports them.
func conditionCounts(app *v1alpha1.Application) map[string]float64 {
	counts := map[string]float64{}
	for _, c := range app.Status.Conditions {
		counts[string(c.Type)]++
	}
	return counts
}

// observeReconcile records a comparison's duration and the app's state
// after it.
func observeReconcile(app *v1alpha1.Application, took time.Duration) {
	reconcileSeconds.WithLabelValues(app.Namespace, destServer(app)).Observe(took.Seconds())
	observeAppInfo(app)
}

// observeAppInfo makes app's argocd_app_info series the one of its current
// labels and its argocd_app_condition series those of its conditions.
func observeAppInfo(app *v1alpha1.Application) {
	cur := appSeriesLabels{info: appInfoLabels(app), conditions: conditionCounts(app), project: app.ProjectName()}
	key := app.Namespace + "/" + app.Name
	appSeriesMu.Lock()
	defer appSeriesMu.Unlock()
	prev, ok := appSeries[key]
	appSeries[key] = cur
	if ok {
		if !slices.Equal(prev.info, cur.info) {
			appInfo.DeleteLabelValues(prev.info...)
		}
		for cond := range prev.conditions {
			if _, still := cur.conditions[cond]; !still || prev.project != cur.project {
				appConditions.DeleteLabelValues(app.Namespace, app.Name, prev.project, cond)
			}
		}
	}
	appInfo.WithLabelValues(cur.info...).Set(1)
	for cond, n := range cur.conditions {
		appConditions.WithLabelValues(app.Namespace, app.Name, cur.project, cond).Set(n)
	}
}

// Outcomes of comparisons (skiff_app_comparisons_total).
const (
	comparisonComputed = "computed"
	comparisonReused   = "reused"
)

func observeComparison(app *v1alpha1.Application, outcome string) {
	comparisonsTotal.WithLabelValues(app.Namespace, outcome).Inc()
}

// forgetAppSeries drops the series of a deleted app: its argocd_app_info
// and argocd_app_condition and, so that deleted apps do not pile up, its
// counters (a recreated app's start again from zero, which rate()
// handles).
func forgetAppSeries(namespace, name string) {
	app := prometheus.Labels{"namespace": namespace, "name": name}
	syncTotal.DeletePartialMatch(app)
	syncSeconds.DeletePartialMatch(app)
	k8sRequests.DeletePartialMatch(app)
	key := namespace + "/" + name
	appSeriesMu.Lock()
	defer appSeriesMu.Unlock()
	if prev, ok := appSeries[key]; ok {
		delete(appSeries, key)
		appInfo.DeleteLabelValues(prev.info...)
		for cond := range prev.conditions {
			appConditions.DeleteLabelValues(namespace, name, prev.project, cond)
		}
	}
}

// observeSync counts a completed sync operation that took took, and
// records the app's state after it (its operation is over).
func observeSync(app *v1alpha1.Application, phase v1alpha1.OperationPhase, dryRun bool, took time.Duration) {
	syncTotal.WithLabelValues(app.Namespace, app.Name, app.ProjectName(), destServer(app),
		string(phase), strconv.FormatBool(dryRun)).Inc()
	syncSeconds.WithLabelValues(app.Namespace, app.Name, app.ProjectName(), destServer(app)).Add(took.Seconds())
	observeAppInfo(app)
}

// ReportCluster sets argocd_cluster_info of the one cluster Skiff deploys
// to, the local one, named as Argo CD names it; version is its Kubernetes
// major.minor, as Argo CD shows it.
func ReportCluster(version string) {
	clusterInfo.Reset()
	clusterInfo.WithLabelValues(project.InClusterServer, version, project.InClusterName).Set(1)
}
