package notify

import (
	"testing"
	"time"
)

func TestCatalogTriggers(t *testing.T) {
	now := func() time.Time { return time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC) }
	tests := map[string]struct {
		trigger     string
		app         map[string]any
		want        bool
		wantOncePer string
	}{
		"a succeeded operation fires on-sync-succeeded": {
			trigger: "on-sync-succeeded",
			app:     map[string]any{"status": map[string]any{"operationState": map[string]any{"phase": "Succeeded"}}},
			want:    true,
		},
		"an app without an operation does not fire on-sync-succeeded": {
			trigger: "on-sync-succeeded",
			app:     map[string]any{"status": map[string]any{}},
		},
		"a failed operation fires on-sync-failed": {
			trigger: "on-sync-failed",
			app:     map[string]any{"status": map[string]any{"operationState": map[string]any{"phase": "Failed"}}},
			want:    true,
		},
		"a degraded app fires on-health-degraded": {
			trigger: "on-health-degraded",
			app:     map[string]any{"status": map[string]any{"health": map[string]any{"status": "Degraded"}}},
			want:    true,
		},
		"a healthy synced app fires on-deployed once per revision": {
			trigger: "on-deployed",
			app: map[string]any{"status": map[string]any{
				"health":         map[string]any{"status": "Healthy"},
				"operationState": map[string]any{"phase": "Succeeded", "syncResult": map[string]any{"revision": "abc"}},
			}},
			want:        true,
			wantOncePer: "abc",
		},
		"every app fires on-created once per name": {
			trigger:     "on-created",
			app:         map[string]any{"metadata": map[string]any{"name": "guestbook"}},
			want:        true,
			wantOncePer: "guestbook",
		},
	}
	triggers := catalogTriggers()
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			res, err := triggers[tt.trigger].Evaluate(Env(tt.app, now))
			if err != nil {
				t.Fatal(err)
			}
			if res[0].Triggered != tt.want || res[0].OncePer != tt.wantOncePer {
				t.Errorf("got triggered=%v oncePer=%q, want %v %q", res[0].Triggered, res[0].OncePer, tt.want, tt.wantOncePer)
			}
		})
	}
}

func TestTimeHelpers(t *testing.T) {
	now := func() time.Time { return time.Date(2026, 1, 1, 0, 10, 0, 0, time.UTC) }
	tests := map[string]struct {
		startedAt string
		want      bool
	}{
		"an operation running for ten minutes is older than five": {startedAt: "2026-01-01T00:00:00Z", want: true},
		"an operation started a minute ago is not":                {startedAt: "2026-01-01T00:09:00Z"},
	}
	trigger := Trigger{Name: "slow", Conditions: []Condition{{
		When: "time.Now().Sub(time.Parse(app.status.operationState.startedAt)).Minutes() >= 5", Send: []string{"x"},
	}}}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			app := map[string]any{"status": map[string]any{"operationState": map[string]any{"startedAt": tt.startedAt}}}
			res, err := trigger.Evaluate(Env(app, now))
			if err != nil {
				t.Fatal(err)
			}
			if res[0].Triggered != tt.want {
				t.Errorf("triggered = %v, want %v", res[0].Triggered, tt.want)
			}
		})
	}
}
