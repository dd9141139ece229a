package notify

import (
	"fmt"
	"testing"
	"time"
)

func TestPlan(t *testing.T) {
	cfg, errs := Parse(nil, nil)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	now := func() time.Time { return time.Unix(1000, 0) }
	succeeded := func(rev string) map[string]any {
		return map[string]any{"metadata": map[string]any{"name": "guestbook"}, "status": map[string]any{
			"operationState": map[string]any{"phase": "Succeeded", "syncResult": map[string]any{"revision": rev}},
			"health":         map[string]any{"status": "Healthy"},
		}}
	}
	opAt := func(startedAt string) map[string]any {
		return map[string]any{"status": map[string]any{"operationState": map[string]any{"phase": "Succeeded", "startedAt": startedAt}}}
	}
	running := map[string]any{"status": map[string]any{"operationState": map[string]any{"phase": "Running"}}}
	sub := func(trigger string) []Subscription {
		return []Subscription{{Trigger: trigger, Service: "slack", Recipient: "c"}}
	}
	tests := map[string]struct {
		trigger string
		apps    []map[string]any
		want    []int // deliveries due after each app version, recording each as sent
	}{
		"a condition that keeps holding sends once": {
			trigger: "on-sync-succeeded", apps: []map[string]any{succeeded("a"), succeeded("a")}, want: []int{1, 0},
		},
		"a condition that stops and holds again sends again": {
			trigger: "on-sync-succeeded", apps: []map[string]any{succeeded("a"), running, succeeded("b")}, want: []int{1, 0, 1},
		},
		"a new operation sends again even when its running phase was never seen": {
			trigger: "on-sync-succeeded", apps: []map[string]any{opAt("t1"), opAt("t1"), opAt("t2")}, want: []int{1, 0, 1},
		},
		"oncePer sends once per value even across interruptions": {
			trigger: "on-deployed", apps: []map[string]any{succeeded("a"), running, succeeded("a"), succeeded("b")}, want: []int{1, 0, 0, 1},
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			state := State{}
			for i, app := range tt.apps {
				due, errs := cfg.Plan(app, sub(tt.trigger), state, now)
				if len(errs) > 0 {
					t.Fatal(errs)
				}
				if len(due) != tt.want[i] {
					t.Fatalf("step %d: %d due, want %d", i, len(due), tt.want[i])
				}
				for _, d := range due {
					state[d.StateKey] = now().Unix()
				}
			}
		})
	}
}

func TestStateEncodeIsBounded(t *testing.T) {
	tests := map[string]struct {
		entries, want int
	}{
		"a small state is kept whole":        {entries: 3, want: 3},
		"a large state keeps the newest 100": {entries: 150, want: maxStateEntries},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			s := State{}
			for i := range tt.entries {
				s[fmt.Sprint("k", i)] = int64(i)
			}
			got := ParseState(s.Encode())
			if len(got) != tt.want {
				t.Errorf("%d entries, want %d", len(got), tt.want)
			}
			if _, ok := got[fmt.Sprint("k", tt.entries-1)]; !ok {
				t.Error("newest entry dropped")
			}
		})
	}
}
