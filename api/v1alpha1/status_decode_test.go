package v1alpha1

import (
	"encoding/json"
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
)

func TestApplicationStatusDecodeLeavesOutFieldsOfTheWrongType(t *testing.T) {
	tests := map[string]struct {
		status         string
		wantSync       SyncStatusCode
		wantHealth     HealthStatusCode
		wantHistory    int
		wantUnreadable []string
	}{
		"a well-formed status is read whole": {
			status:   `{"sync":{"status":"Synced"},"health":{"status":"Healthy"},"history":[{"id":0,"revision":"a"}]}`,
			wantSync: SyncStatusCodeSynced, wantHealth: HealthStatusHealthy, wantHistory: 1,
		},
		"a field of the wrong type is left out and named": {
			status:   `{"sync":{"status":"Synced"},"history":"oops"}`,
			wantSync: SyncStatusCodeSynced, wantUnreadable: []string{"history"},
		},
		"a wrong type deep inside a field leaves out that field only": {
			status:     `{"sync":{"status":5},"health":{"status":"Healthy"},"conditions":[{"type":1}]}`,
			wantHealth: HealthStatusHealthy, wantUnreadable: []string{"conditions", "sync"},
		},
		"a status that is not an object is left out whole": {
			status: `"oops"`, wantUnreadable: []string{"status"},
		},
		"fields unknown to Skiff are ignored, not unreadable": {
			status:   `{"sync":{"status":"OutOfSync"},"Sync":"x","controllerShard":{"a":1}}`,
			wantSync: SyncStatusCodeOutOfSync,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			doc := []byte(`{"apiVersion":"argoproj.io/v1alpha1","kind":"Application","metadata":{"name":"a"},` +
				`"spec":{"project":"default"},"status":` + tc.status + `}`)
			var app Application
			if err := json.Unmarshal(doc, &app); err != nil {
				t.Fatalf("the Application did not decode: %v", err)
			}
			checkDecodedStatus(t, "json", &app, tc.wantSync, tc.wantHealth, tc.wantHistory, tc.wantUnreadable)

			// Through the API machinery's codec, as clients and informers decode.
			scheme := runtime.NewScheme()
			if err := AddToScheme(scheme); err != nil {
				t.Fatal(err)
			}
			obj, _, err := serializer.NewCodecFactory(scheme).UniversalDeserializer().Decode(doc, nil, nil)
			if err != nil {
				t.Fatalf("the codec did not decode the Application: %v", err)
			}
			checkDecodedStatus(t, "codec", obj.(*Application), tc.wantSync, tc.wantHealth, tc.wantHistory, tc.wantUnreadable)
		})
	}
}

func checkDecodedStatus(t *testing.T, how string, app *Application, sync SyncStatusCode, health HealthStatusCode, history int, unreadable []string) {
	t.Helper()
	if app.Spec.Project != "default" {
		t.Errorf("%s: spec.project = %q, want default", how, app.Spec.Project)
	}
	if app.Status.Sync.Status != sync || app.Status.Health.Status != health || len(app.Status.History) != history {
		t.Errorf("%s: read sync %q, health %q, %d history entries; want %q, %q, %d",
			how, app.Status.Sync.Status, app.Status.Health.Status, len(app.Status.History), sync, health, history)
	}
	got, reason := app.Status.Unreadable()
	if !reflect.DeepEqual(got, unreadable) {
		t.Errorf("%s: unreadable fields %v, want %v", how, got, unreadable)
	}
	if (len(got) > 0) != (reason != "") {
		t.Errorf("%s: unreadable fields %v with reason %q", how, got, reason)
	}
}
