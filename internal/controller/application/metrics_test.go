package application

import (
	"maps"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/skiffcd/skiff/api/v1alpha1"
)

// appInfoOf returns the labels of the argocd_app_info series of the app
// named name, one map per series.
func appInfoOf(t *testing.T, name string) []map[string]string {
	t.Helper()
	return seriesOf(t, appInfo, name)
}

// seriesOf returns the labels of vec's series of the app named name, one
// map per series, with the value as label "value".
func seriesOf(t *testing.T, vec prometheus.Collector, name string) []map[string]string {
	t.Helper()
	ch := make(chan prometheus.Metric, 1024)
	vec.Collect(ch)
	close(ch)
	var out []map[string]string
	for m := range ch {
		var pb dto.Metric
		if err := m.Write(&pb); err != nil {
			t.Fatal(err)
		}
		labels := map[string]string{"value": strconv.FormatFloat(pb.GetGauge().GetValue(), 'g', -1, 64)}
		for _, l := range pb.GetLabel() {
			labels[l.GetName()] = l.GetValue()
		}
		if labels["name"] == name {
			out = append(out, labels)
		}
	}
	return out
}

func TestAppInfoKeepsOneSeriesPerApp(t *testing.T) {
	tests := map[string]struct {
		statuses   []v1alpha1.SyncStatusCode
		deleted    bool
		wantSeries int
		wantSync   string
	}{
		"a first comparison adds the app's series": {
			statuses: []v1alpha1.SyncStatusCode{v1alpha1.SyncStatusCodeOutOfSync}, wantSeries: 1, wantSync: "OutOfSync"},
		"a changed status replaces the series": {
			statuses:   []v1alpha1.SyncStatusCode{v1alpha1.SyncStatusCodeOutOfSync, v1alpha1.SyncStatusCodeSynced},
			wantSeries: 1, wantSync: "Synced"},
		"an unchanged status keeps the series": {
			statuses:   []v1alpha1.SyncStatusCode{v1alpha1.SyncStatusCodeSynced, v1alpha1.SyncStatusCodeSynced},
			wantSeries: 1, wantSync: "Synced"},
		"a deleted app has no series": {
			statuses: []v1alpha1.SyncStatusCode{v1alpha1.SyncStatusCodeSynced}, deleted: true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			app := &v1alpha1.Application{}
			app.Namespace, app.Name = "metrics-test", name
			for _, st := range tc.statuses {
				app.Status.Sync.Status = st
				observeReconcile(app, 0)
			}
			if tc.deleted {
				forgetAppSeries(app.Namespace, app.Name)
			}
			series := appInfoOf(t, name)
			if len(series) != tc.wantSeries {
				t.Fatalf("%d series %v, want %d", len(series), series, tc.wantSeries)
			}
			if tc.wantSeries == 1 && series[0]["sync_status"] != tc.wantSync {
				t.Errorf("sync_status %q, want %q", series[0]["sync_status"], tc.wantSync)
			}
		})
	}
}

func TestAppInfoLabelsAreArgoCDs(t *testing.T) {
	off := false
	tests := map[string]struct {
		edit func(*v1alpha1.Application)
		want map[string]string
	}{
		"a new app has Unknown statuses, no operation and auto-sync off": {
			edit: func(*v1alpha1.Application) {},
			want: map[string]string{"sync_status": "Unknown", "health_status": "Unknown", "operation": "",
				"autosync_enabled": "false", "project": "default"},
		},
		"an app with automated sync has autosync_enabled true": {
			edit: func(a *v1alpha1.Application) {
				a.Spec.SyncPolicy = &v1alpha1.SyncPolicy{Automated: &v1alpha1.SyncPolicyAutomated{}}
			},
			want: map[string]string{"autosync_enabled": "true"},
		},
		"automated sync turned off by enabled false is off": {
			edit: func(a *v1alpha1.Application) {
				a.Spec.SyncPolicy = &v1alpha1.SyncPolicy{Automated: &v1alpha1.SyncPolicyAutomated{Enabled: &off}}
			},
			want: map[string]string{"autosync_enabled": "false"},
		},
		"a requested sync is the sync operation": {
			edit: func(a *v1alpha1.Application) {
				a.Operation = &v1alpha1.Operation{Sync: &v1alpha1.SyncOperation{}}
			},
			want: map[string]string{"operation": "sync"},
		},
		"an app being deleted is the delete operation, even with a sync requested": {
			edit: func(a *v1alpha1.Application) {
				now := metav1.NewTime(time.Unix(1, 0))
				a.DeletionTimestamp = &now
				a.Operation = &v1alpha1.Operation{Sync: &v1alpha1.SyncOperation{}}
			},
			want: map[string]string{"operation": "delete"},
		},
		"statuses are the app's": {
			edit: func(a *v1alpha1.Application) {
				a.Status.Sync.Status = v1alpha1.SyncStatusCodeSynced
				a.Status.Health.Status = v1alpha1.HealthStatusDegraded
			},
			want: map[string]string{"sync_status": "Synced", "health_status": "Degraded"},
		},
		"the repository URL loses its credentials": {
			edit: func(a *v1alpha1.Application) {
				a.Spec.Source = &v1alpha1.ApplicationSource{RepoURL: "https://user:s3cret@git.example.com/team/app.git"}
			},
			want: map[string]string{"repo": "https://git.example.com/team/app.git"},
		},
		"the local cluster given by name is its server URL": {
			edit: func(a *v1alpha1.Application) {
				a.Spec.Destination = v1alpha1.ApplicationDestination{Name: "in-cluster", Namespace: "web"}
			},
			want: map[string]string{"dest_server": "https://kubernetes.default.svc", "dest_namespace": "web"},
		},
		"a project named is the project": {
			edit: func(a *v1alpha1.Application) { a.Spec.Project = "team" },
			want: map[string]string{"project": "team"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			app := &v1alpha1.Application{}
			app.Namespace, app.Name = "argocd", "guestbook"
			tc.edit(app)
			values := appInfoLabels(app)
			if len(values) != len(appInfoLabelNames) {
				t.Fatalf("%d values for %d labels", len(values), len(appInfoLabelNames))
			}
			for label, want := range tc.want {
				i := slices.Index(appInfoLabelNames, label)
				if i < 0 {
					t.Fatalf("argocd_app_info has no label %q", label)
				}
				if values[i] != want {
					t.Errorf("%s = %q, want %q", label, values[i], want)
				}
			}
		})
	}
}

func TestAppConditionSeriesCountTheAppsConditions(t *testing.T) {
	cond := func(types ...v1alpha1.ApplicationConditionType) []v1alpha1.ApplicationCondition {
		var out []v1alpha1.ApplicationCondition
		for _, ty := range types {
			out = append(out, v1alpha1.ApplicationCondition{Type: ty})
		}
		return out
	}
	tests := map[string]struct {
		passes  [][]v1alpha1.ApplicationCondition
		deleted bool
		want    map[string]string // condition → count
	}{
		"an app without conditions has no series": {
			passes: [][]v1alpha1.ApplicationCondition{nil}, want: map[string]string{}},
		"conditions of one type are counted together": {
			passes: [][]v1alpha1.ApplicationCondition{cond(v1alpha1.ApplicationConditionSyncError, v1alpha1.ApplicationConditionSyncError)},
			want:   map[string]string{"SyncError": "2"}},
		"a condition that went is no longer reported": {
			passes: [][]v1alpha1.ApplicationCondition{
				cond(v1alpha1.ApplicationConditionSyncError, v1alpha1.ApplicationConditionComparisonError),
				cond(v1alpha1.ApplicationConditionComparisonError)},
			want: map[string]string{"ComparisonError": "1"}},
		"a deleted app has no series": {
			passes:  [][]v1alpha1.ApplicationCondition{cond(v1alpha1.ApplicationConditionSyncError)},
			deleted: true, want: map[string]string{}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			app := &v1alpha1.Application{}
			app.Namespace, app.Name = "metrics-test", "conditions: "+name
			for _, conds := range tc.passes {
				app.Status.Conditions = conds
				observeAppInfo(app)
			}
			if tc.deleted {
				forgetAppSeries(app.Namespace, app.Name)
			}
			got := map[string]string{}
			for _, s := range seriesOf(t, appConditions, app.Name) {
				got[s["condition"]] = s["value"]
			}
			if !maps.Equal(got, tc.want) {
				t.Errorf("argocd_app_condition %v, want %v", got, tc.want)
			}
		})
	}
}

func TestADeletedAppsCountersGo(t *testing.T) {
	app := &v1alpha1.Application{}
	app.Namespace, app.Name = "metrics-test", "deleted-counters"
	other := app.DeepCopy()
	other.Name = "kept-counters"
	for _, a := range []*v1alpha1.Application{app, other} {
		observeSync(a, v1alpha1.OperationSucceeded, false, time.Second)
	}
	forgetAppSeries(app.Namespace, app.Name)
	for _, vec := range []prometheus.Collector{syncTotal, syncSeconds} {
		if got := len(seriesOf(t, vec, app.Name)); got != 0 {
			t.Errorf("%d series of the deleted app, want none", got)
		}
		if got := len(seriesOf(t, vec, other.Name)); got != 1 {
			t.Errorf("%d series of the other app, want 1", got)
		}
	}
}
