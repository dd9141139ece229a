package application

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/skiffcd/skiff/api/v1alpha1"
)

// appInfoSeries returns the label values of the skiff_app_info series of
// the app named name, one string per series.
func appInfoSeries(t *testing.T, name string) []map[string]string {
	t.Helper()
	ch := make(chan prometheus.Metric, 1024)
	appInfo.Collect(ch)
	close(ch)
	var out []map[string]string
	for m := range ch {
		var pb dto.Metric
		if err := m.Write(&pb); err != nil {
			t.Fatal(err)
		}
		labels := map[string]string{}
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
				forgetAppInfo(app.Namespace, app.Name)
			}
			series := appInfoSeries(t, name)
			if len(series) != tc.wantSeries {
				t.Fatalf("%d series %v, want %d", len(series), series, tc.wantSeries)
			}
			if tc.wantSeries == 1 && series[0]["sync_status"] != tc.wantSync {
				t.Errorf("sync_status %q, want %q", series[0]["sync_status"], tc.wantSync)
			}
		})
	}
}
