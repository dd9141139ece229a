package main

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/skiffcd/skiff/api/v1alpha1"
	"github.com/skiffcd/skiff/internal/testgit"
)

// TestMetricsCarryArgoNamesAndLabels scrapes the manager's /metrics over
// HTTP after an Application synced from git and a blue-green Rollout
// promoted after an AnalysisRun, and checks that Argo CD's and Argo
// Rollouts' dashboards find their series: names, types, label names and
// the labels of these objects.
func TestMetricsCarryArgoNamesAndLabels(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := kube(t)

	// An Application synced automatically from git.
	dest := cluster.Namespace(t)
	repo := testgit.New(t)
	repo.Commit(map[string]string{"app/cm.yaml": configMapV1})
	app := &v1alpha1.Application{}
	readTestdata(t, "metrics-app.yml", app)
	app.Namespace = appNamespace
	app.Spec.Source.RepoURL = repo.URL()
	app.Spec.Destination.Namespace = dest
	if err := c.Create(ctx, app); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Delete(context.Background(), app) })
	waitFor(t, "the app synced and healthy", func() error {
		got := getApp(t, c, app.Name)
		if st := got.Status.OperationState; st == nil || st.Phase != v1alpha1.OperationSucceeded ||
			got.Status.Sync.Status != v1alpha1.SyncStatusCodeSynced || got.Status.Health.Status != v1alpha1.HealthStatusHealthy {
			return fmt.Errorf("operation %+v, sync %s, health %s", got.Status.OperationState, got.Status.Sync.Status, got.Status.Health.Status)
		}
		return nil
	})

	// A blue-green Rollout whose update is promoted after its analysis.
	ok := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte(`{"ok": true}`))
	}))
	t.Cleanup(ok.Close)
	ns := cluster.Namespace(t)
	createFromTestdata(t, c, "metrics-bluegreen.yml", ns, func(ro *v1alpha1.Rollout) {
		ro.Spec.Strategy.BlueGreen.PrePromotionAnalysis.Args[0].Value = v1alpha1.NewAnyString(ok.URL)
	})
	const name = "metrics-bg"
	first := waitRollout(t, c, ns, name, "the first revision healthy", phaseIs(v1alpha1.RolloutPhaseHealthy)).Status.CurrentPodHash
	mustRollout(t, ns, "set", "image", name, "web=nginx:1.27")
	waitRollout(t, c, ns, name, "the second revision promoted after its analysis", func(ro *v1alpha1.Rollout) bool {
		return phaseIs(v1alpha1.RolloutPhaseHealthy)(ro) && ro.Status.StableRS != first
	})
	var runs v1alpha1.AnalysisRunList
	if err := c.List(ctx, &runs, client.InNamespace(ns)); err != nil || len(runs.Items) != 1 {
		t.Fatalf("AnalysisRuns: %v %d, want one", err, len(runs.Items))
	}
	run := runs.Items[0].Name

	var families map[string]*dto.MetricFamily
	waitFor(t, "the series of the app, the rollout and the run", func() error {
		families = scrapeMetrics(t)
		for _, want := range []struct {
			family string
			labels map[string]string
		}{
			{"argocd_app_info", map[string]string{"namespace": appNamespace, "name": app.Name, "project": "default",
				"autosync_enabled": "true", "repo": repo.URL(), "dest_server": "https://kubernetes.default.svc",
				"dest_namespace": dest, "sync_status": "Synced", "health_status": "Healthy", "operation": ""}},
			{"argocd_app_sync_total", map[string]string{"namespace": appNamespace, "name": app.Name, "project": "default",
				"dest_server": "https://kubernetes.default.svc", "phase": "Succeeded", "dry_run": "false"}},
			{"argocd_app_sync_duration_seconds_total", map[string]string{"namespace": appNamespace, "name": app.Name, "project": "default",
				"dest_server": "https://kubernetes.default.svc"}},
			{"argocd_app_reconcile", map[string]string{"namespace": appNamespace, "dest_server": "https://kubernetes.default.svc"}},
			{"argocd_app_k8s_request_total", map[string]string{"namespace": appNamespace, "name": app.Name, "project": "default",
				"server": "https://kubernetes.default.svc", "verb": "Patch", "resource_kind": "configmaps",
				"resource_namespace": dest, "response_code": "201", "dry_run": "false"}}, // an apply that created it
			{"argocd_git_request_total", map[string]string{"repo": repo.URL(), "request_type": "ls-remote"}},
			{"argocd_git_request_total", map[string]string{"repo": repo.URL(), "request_type": "fetch"}},
			{"argocd_git_request_duration_seconds", map[string]string{"repo": repo.URL(), "request_type": "fetch"}},
			{"argocd_cluster_info", map[string]string{"server": "https://kubernetes.default.svc", "name": "in-cluster"}},
			{"rollout_info", map[string]string{"namespace": ns, "name": name, "strategy": "blueGreen", "traffic_router": "", "phase": "Completed"}},
			{"rollout_info_replicas_available", map[string]string{"namespace": ns, "name": name}},
			{"rollout_phase", map[string]string{"namespace": ns, "name": name, "strategy": "blueGreen", "phase": "Completed"}},
			{"rollout_reconcile", map[string]string{"namespace": ns, "name": name}},
			{"analysis_run_info", map[string]string{"namespace": ns, "name": run, "phase": "Successful"}},
			{"analysis_run_metric_type", map[string]string{"namespace": ns, "name": run, "metric": "healthy", "type": "Web"}},
			{"analysis_run_metric_phase", map[string]string{"namespace": ns, "name": run, "metric": "healthy", "type": "Web",
				"dry_run": "false", "phase": "Successful"}},
			{"analysis_run_reconcile", map[string]string{"namespace": ns, "name": run}},
		} {
			if err := hasSeries(families, want.family, want.labels); err != nil {
				return err
			}
		}
		return nil
	})

	// Types and label names as Argo's dashboards query them.
	for family, want := range map[string]struct {
		typ    dto.MetricType
		labels []string
	}{
		"argocd_app_info": {dto.MetricType_GAUGE, []string{"namespace", "name", "project", "autosync_enabled", "repo",
			"dest_server", "dest_namespace", "sync_status", "health_status", "operation"}},
		"argocd_app_sync_total":                  {dto.MetricType_COUNTER, []string{"namespace", "name", "project", "dest_server", "phase", "dry_run"}},
		"argocd_app_sync_duration_seconds_total": {dto.MetricType_COUNTER, []string{"namespace", "name", "project", "dest_server"}},
		"argocd_app_reconcile":                   {dto.MetricType_HISTOGRAM, []string{"namespace", "dest_server"}},
		"argocd_app_k8s_request_total":           {dto.MetricType_COUNTER, []string{"namespace", "name", "project", "server", "response_code", "verb", "resource_kind", "resource_namespace", "dry_run"}},
		"argocd_git_request_total":               {dto.MetricType_COUNTER, []string{"repo", "request_type"}},
		"argocd_git_request_duration_seconds":    {dto.MetricType_HISTOGRAM, []string{"repo", "request_type"}},
		"argocd_cluster_info":                    {dto.MetricType_GAUGE, []string{"server", "k8s_version", "name"}},
		"rollout_info":                           {dto.MetricType_GAUGE, []string{"namespace", "name", "strategy", "traffic_router", "phase"}},
		"rollout_phase":                          {dto.MetricType_GAUGE, []string{"namespace", "name", "strategy", "phase"}},
		"rollout_reconcile":                      {dto.MetricType_HISTOGRAM, []string{"namespace", "name"}},
		"analysis_run_info":                      {dto.MetricType_GAUGE, []string{"namespace", "name", "phase"}},
		"analysis_run_metric_type":               {dto.MetricType_GAUGE, []string{"namespace", "name", "metric", "type"}},
		"analysis_run_metric_phase":              {dto.MetricType_GAUGE, []string{"namespace", "name", "metric", "type", "dry_run", "phase"}},
		"analysis_run_reconcile":                 {dto.MetricType_HISTOGRAM, []string{"namespace", "name"}},
	} {
		f := families[family]
		if f.GetType() != want.typ {
			t.Errorf("%s is a %s, want a %s", family, f.GetType(), want.typ)
		}
		for _, m := range f.GetMetric() {
			var names []string
			for _, l := range m.GetLabel() {
				names = append(names, l.GetName())
			}
			if !sameSet(names, want.labels) {
				t.Errorf("%s has labels %v, want %v", family, names, want.labels)
				break
			}
		}
	}
	// The skiff_* series Argo's names replaced are gone.
	for _, old := range []string{"skiff_app_info", "skiff_app_sync_total", "skiff_app_reconcile_duration_seconds", "skiff_notifications_deliveries_total"} {
		if _, found := families[old]; found {
			t.Errorf("%s is still served", old)
		}
	}

	// A deleted Rollout's and a deleted Application's series go.
	ro := &v1alpha1.Rollout{}
	ro.Namespace, ro.Name = ns, name
	if err := c.Delete(ctx, ro); err != nil {
		t.Fatal(err)
	}
	if err := c.Delete(ctx, app); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the deleted objects' series gone", func() error {
		families := scrapeMetrics(t)
		for family, labels := range map[string]map[string]string{
			"rollout_info":          {"namespace": ns, "name": name},
			"rollout_phase":         {"namespace": ns, "name": name},
			"rollout_reconcile":     {"namespace": ns, "name": name},
			"argocd_app_info":       {"namespace": appNamespace, "name": app.Name},
			"argocd_app_sync_total": {"namespace": appNamespace, "name": app.Name},
		} {
			if hasSeries(families, family, labels) == nil {
				return fmt.Errorf("%s still has a series of %v", family, labels)
			}
		}
		return nil
	})
}

// readTestdata decodes testdata/FILE into obj.
func readTestdata(t *testing.T, file string, obj any) {
	t.Helper()
	data, err := os.ReadFile("testdata/" + file)
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.UnmarshalStrict(data, obj); err != nil {
		t.Fatal(err)
	}
}

// scrapeMetrics reads the manager's /metrics over HTTP.
func scrapeMetrics(t *testing.T) map[string]*dto.MetricFamily {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+metricsAddr+"/metrics", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /metrics: %s", resp.Status)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("parsing /metrics: %v", err)
	}
	return families
}

// hasSeries returns nil when family has a series with (at least) labels.
func hasSeries(families map[string]*dto.MetricFamily, family string, labels map[string]string) error {
	f, ok := families[family]
	if !ok {
		return fmt.Errorf("no %s", family)
	}
	for _, m := range f.GetMetric() {
		have := map[string]string{}
		for _, l := range m.GetLabel() {
			have[l.GetName()] = l.GetValue()
		}
		matched := true
		for k, v := range labels {
			if got, ok := have[k]; !ok || got != v {
				matched = false
				break
			}
		}
		if matched {
			return nil
		}
	}
	return fmt.Errorf("no %s series with %v among %d, such as %v", family, labels, len(f.GetMetric()), f.GetMetric()[0].GetLabel())
}

func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return strings.Join(a, ",") == strings.Join(b, ",")
}
