package project

import (
	"strings"
	"testing"
	"time"
	_ "time/tzdata" // the time zone tests must not depend on the host

	"github.com/skiffcd/skiff/api/v1alpha1"
)

// fixed is Monday 2 March 2026, 10:30 UTC.
var fixed = time.Date(2026, 3, 2, 10, 30, 0, 0, time.UTC)

func at(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t
}

func windows(ws ...v1alpha1.SyncWindow) *v1alpha1.AppProject {
	return proj(v1alpha1.AppProjectSpec{SyncWindows: ws})
}

func indexes(ws []Window) []int {
	out := []int{}
	for _, w := range ws {
		out = append(out, w.Index)
	}
	return out
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestMatchingWindows(t *testing.T) {
	w := func(apps, nss, clusters []string, and bool) v1alpha1.SyncWindow {
		return v1alpha1.SyncWindow{Kind: "allow", Schedule: "* * * * *", Duration: "1h",
			Applications: apps, Namespaces: nss, Clusters: clusters, UseAndOperator: and}
	}
	tests := map[string]struct {
		window                  v1alpha1.SyncWindow
		app, namespace, cluster string
		want                    bool
	}{
		"an application glob matches the name": {
			window: w([]string{"web-*"}, nil, nil, false), app: "web-prod", want: true,
		},
		"an application glob does not match another name": {
			window: w([]string{"web-*"}, nil, nil, false), app: "db-prod", want: false,
		},
		"a namespace glob matches the namespace": {
			window: w(nil, []string{"shop-*"}, nil, false), app: "x", namespace: "shop-eu", want: true,
		},
		"a namespace star matches an empty namespace": {
			window: w(nil, []string{"*"}, nil, false), app: "x", want: true,
		},
		"a cluster glob matches the server": {
			window: w(nil, nil, []string{"https://*.example.com"}, false), app: "x", cluster: "https://prod.example.com", want: true,
		},
		"a cluster glob matches the cluster name": {
			window: w(nil, nil, []string{"prod-*"}, false), app: "x", cluster: "prod-eu", want: true,
		},
		"a cluster star does not match an empty cluster": {
			window: w(nil, nil, []string{"*"}, false), app: "x", want: false,
		},
		"the in-cluster name matches the local server": {
			window: w(nil, nil, []string{InClusterName}, false), app: "x", cluster: InClusterServer, want: true,
		},
		"the local server matches the in-cluster name": {
			window: w(nil, nil, []string{InClusterServer}, false), app: "x", cluster: InClusterName, want: true,
		},
		"any one list matching is enough by default": {
			window: w([]string{"web"}, []string{"nope"}, []string{"nope"}, false), app: "web", namespace: "ns", cluster: "c", want: true,
		},
		"with andOperator every list must match": {
			window: w([]string{"web"}, []string{"nope"}, nil, true), app: "web", namespace: "ns", want: false,
		},
		"with andOperator matching every non-empty list is enough": {
			window: w([]string{"web"}, []string{"n*"}, nil, true), app: "web", namespace: "ns", want: true,
		},
		"a window without lists matches nothing": {
			window: w(nil, nil, nil, false), app: "web", namespace: "ns", cluster: "c", want: false,
		},
		"a window without lists matches nothing with andOperator either": {
			window: w(nil, nil, nil, true), app: "web", namespace: "ns", cluster: "c", want: false,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got := MatchingWindows(windows(tc.window), tc.app, tc.namespace, tc.cluster)
			if (len(got) == 1) != tc.want {
				t.Errorf("got %v, want match %v", got, tc.want)
			}
		})
	}
}

func TestActiveWindows(t *testing.T) {
	tests := map[string]struct {
		windows    []v1alpha1.SyncWindow
		now        time.Time
		wantAllows []int
		wantDenies []int
		wantErr    string
	}{
		"a window is active inside its duration": {
			windows:    []v1alpha1.SyncWindow{{Kind: "allow", Schedule: "0 10 * * *", Duration: "1h", Applications: []string{"*"}}},
			now:        at("2026-03-02T10:30:00Z"),
			wantAllows: []int{0}, wantDenies: []int{},
		},
		"a window is active at its start": {
			windows:    []v1alpha1.SyncWindow{{Kind: "allow", Schedule: "0 10 * * *", Duration: "1h", Applications: []string{"*"}}},
			now:        at("2026-03-02T10:00:00Z"),
			wantAllows: []int{0}, wantDenies: []int{},
		},
		"a window is inactive at its end": {
			windows:    []v1alpha1.SyncWindow{{Kind: "allow", Schedule: "0 10 * * *", Duration: "1h", Applications: []string{"*"}}},
			now:        at("2026-03-02T11:00:00Z"),
			wantAllows: []int{}, wantDenies: []int{},
		},
		"a window is inactive before its start": {
			windows:    []v1alpha1.SyncWindow{{Kind: "deny", Schedule: "0 10 * * *", Duration: "1h", Applications: []string{"*"}}},
			now:        at("2026-03-02T09:59:59Z"),
			wantAllows: []int{}, wantDenies: []int{},
		},
		"a window that began yesterday is still active": {
			windows:    []v1alpha1.SyncWindow{{Kind: "deny", Schedule: "0 22 * * *", Duration: "12h", Applications: []string{"*"}}},
			now:        at("2026-03-02T08:00:00Z"),
			wantAllows: []int{}, wantDenies: []int{0},
		},
		"a weekday window is inactive on Sunday": {
			windows:    []v1alpha1.SyncWindow{{Kind: "allow", Schedule: "0 9 * * 1-5", Duration: "8h", Applications: []string{"*"}}},
			now:        at("2026-03-01T10:00:00Z"),
			wantAllows: []int{}, wantDenies: []int{},
		},
		"several windows are split by kind": {
			windows: []v1alpha1.SyncWindow{
				{Kind: "allow", Schedule: "0 8 * * *", Duration: "4h", Applications: []string{"*"}},
				{Kind: "deny", Schedule: "30 10 * * *", Duration: "10m", Applications: []string{"*"}},
				{Kind: "allow", Schedule: "0 20 * * *", Duration: "1h", Applications: []string{"*"}},
				{Kind: "allow", Schedule: "0 10 * * *", Duration: "1h", Applications: []string{"app"}},
			},
			now:        at("2026-03-02T10:35:00Z"),
			wantAllows: []int{0, 3}, wantDenies: []int{1},
		},
		"windows for other applications are left out": {
			windows:    []v1alpha1.SyncWindow{{Kind: "deny", Schedule: "* * * * *", Duration: "1h", Applications: []string{"other"}}},
			now:        fixed,
			wantAllows: []int{}, wantDenies: []int{},
		},
		"a time zone shifts the schedule in winter": {
			windows:    []v1alpha1.SyncWindow{{Kind: "allow", Schedule: "0 9 * * *", Duration: "1h", Applications: []string{"*"}, TimeZone: "Europe/Berlin"}},
			now:        at("2026-03-02T08:30:00Z"), // 09:30 CET
			wantAllows: []int{0}, wantDenies: []int{},
		},
		"a time zone follows daylight saving time in summer": {
			windows:    []v1alpha1.SyncWindow{{Kind: "allow", Schedule: "0 9 * * *", Duration: "1h", Applications: []string{"*"}, TimeZone: "Europe/Berlin"}},
			now:        at("2026-07-01T07:30:00Z"), // 09:30 CEST
			wantAllows: []int{0}, wantDenies: []int{},
		},
		"the UTC hour is not the zone's hour": {
			windows:    []v1alpha1.SyncWindow{{Kind: "allow", Schedule: "0 9 * * *", Duration: "1h", Applications: []string{"*"}, TimeZone: "Europe/Berlin"}},
			now:        at("2026-07-01T09:30:00Z"), // 11:30 CEST
			wantAllows: []int{}, wantDenies: []int{},
		},
		"a schedule that never fires is never active": {
			windows:    []v1alpha1.SyncWindow{{Kind: "deny", Schedule: "0 0 30 2 *", Duration: "1h", Applications: []string{"*"}}},
			now:        fixed,
			wantAllows: []int{}, wantDenies: []int{},
		},
		"a bad cron schedule is an error naming the window": {
			windows: []v1alpha1.SyncWindow{
				{Kind: "allow", Schedule: "* * * * *", Duration: "1h", Applications: []string{"*"}},
				{Kind: "deny", Schedule: "every day", Duration: "1h", Applications: []string{"*"}},
			},
			now:     fixed,
			wantErr: `sync window 1 of project p: cannot parse schedule "every day" as a five-field cron expression: `,
		},
		"a six-field schedule is an error": {
			windows: []v1alpha1.SyncWindow{{Kind: "deny", Schedule: "0 0 10 * * *", Duration: "1h", Applications: []string{"*"}}},
			now:     fixed,
			wantErr: `sync window 0 of project p: cannot parse schedule "0 0 10 * * *" as a five-field cron expression: `,
		},
		"a bad duration is an error": {
			windows: []v1alpha1.SyncWindow{{Kind: "deny", Schedule: "* * * * *", Duration: "1 hour", Applications: []string{"*"}}},
			now:     fixed,
			wantErr: `sync window 0 of project p: cannot parse duration "1 hour": `,
		},
		"a zero duration is an error": {
			windows: []v1alpha1.SyncWindow{{Kind: "deny", Schedule: "* * * * *", Duration: "0s", Applications: []string{"*"}}},
			now:     fixed,
			wantErr: `sync window 0 of project p: duration "0s" is not positive`,
		},
		"an unknown kind is an error": {
			windows: []v1alpha1.SyncWindow{{Kind: "block", Schedule: "* * * * *", Duration: "1h", Applications: []string{"*"}}},
			now:     fixed,
			wantErr: `sync window 0 of project p: kind "block" is neither "allow" nor "deny"`,
		},
		"an unknown time zone is an error": {
			windows: []v1alpha1.SyncWindow{{Kind: "deny", Schedule: "* * * * *", Duration: "1h", Applications: []string{"*"}, TimeZone: "Mars/Olympus"}},
			now:     fixed,
			wantErr: `sync window 0 of project p: unknown time zone "Mars/Olympus": `,
		},
		"a bad window for another application is not checked": {
			windows:    []v1alpha1.SyncWindow{{Kind: "deny", Schedule: "bad", Duration: "1h", Applications: []string{"other"}}},
			now:        fixed,
			wantAllows: []int{}, wantDenies: []int{},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			allows, denies, err := ActiveWindows(windows(tc.windows...), tc.now, "app", "ns", "https://c")
			if tc.wantErr != "" {
				if err == nil || !strings.HasPrefix(err.Error(), tc.wantErr) {
					t.Fatalf("got error %v, want one starting with %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !equalInts(indexes(allows), tc.wantAllows) || !equalInts(indexes(denies), tc.wantDenies) {
				t.Errorf("got allows %v denies %v, want %v and %v", indexes(allows), indexes(denies), tc.wantAllows, tc.wantDenies)
			}
		})
	}
}

func TestCanSync(t *testing.T) {
	allowMorning := v1alpha1.SyncWindow{Kind: "allow", Schedule: "0 9 * * *", Duration: "2h", Applications: []string{"*"}}
	allowEvening := v1alpha1.SyncWindow{Kind: "allow", Schedule: "0 20 * * *", Duration: "2h", Applications: []string{"*"}}
	denyNow := v1alpha1.SyncWindow{Kind: "deny", Schedule: "0 10 * * *", Duration: "1h", Namespaces: []string{"*"}}
	manual := func(w v1alpha1.SyncWindow) v1alpha1.SyncWindow { w.ManualSync = true; return w }
	tests := map[string]struct {
		windows    []v1alpha1.SyncWindow
		now        time.Time
		manual     bool
		want       bool
		wantReason string
	}{
		"no windows allow syncs": {
			now: fixed, want: true, wantReason: "no sync window applies",
		},
		"windows for other applications allow syncs": {
			windows: []v1alpha1.SyncWindow{{Kind: "deny", Schedule: "* * * * *", Duration: "1h", Applications: []string{"other"}}},
			now:     fixed, want: true, wantReason: "no sync window applies",
		},
		"an active allow window allows syncs": {
			windows: []v1alpha1.SyncWindow{allowMorning},
			now:     fixed, want: true, wantReason: `sync allowed by active allow window 0 (schedule "0 9 * * *", duration 2h)`,
		},
		"an inactive allow window blocks syncs and says when it opens": {
			windows: []v1alpha1.SyncWindow{allowEvening},
			now:     fixed, want: false,
			wantReason: `sync blocked: no allow window is active (allow window 0 (schedule "0 20 * * *", duration 2h)); next opens at 2026-03-02T20:00:00Z`,
		},
		"an inactive allow window blocks manual syncs without manualSync": {
			windows: []v1alpha1.SyncWindow{allowEvening},
			now:     fixed, manual: true, want: false,
			wantReason: "sync blocked: no allow window is active",
		},
		"an inactive allow window with manualSync lets manual syncs through": {
			windows: []v1alpha1.SyncWindow{manual(allowEvening)},
			now:     fixed, manual: true, want: true,
			wantReason: "manual sync permitted outside allow window 0",
		},
		"an inactive allow window with manualSync still blocks automated syncs": {
			windows: []v1alpha1.SyncWindow{manual(allowEvening)},
			now:     fixed, want: false,
			wantReason: "sync blocked: no allow window is active",
		},
		"manual syncs outside allow windows need manualSync on all of them, as in Argo CD": {
			windows: []v1alpha1.SyncWindow{manual(allowEvening), {Kind: "allow", Schedule: "0 23 * * *", Duration: "1h", Applications: []string{"*"}}},
			now:     fixed, manual: true, want: false,
			wantReason: "sync blocked: no allow window is active",
		},
		"one active allow window among inactive ones allows syncs": {
			windows: []v1alpha1.SyncWindow{allowEvening, allowMorning},
			now:     fixed, want: true, wantReason: "sync allowed by active allow window 1",
		},
		"an active deny window blocks syncs": {
			windows: []v1alpha1.SyncWindow{denyNow},
			now:     fixed, want: false,
			wantReason: `sync blocked by active deny window 0 (schedule "0 10 * * *", duration 1h)`,
		},
		"an active deny window blocks manual syncs without manualSync": {
			windows: []v1alpha1.SyncWindow{denyNow},
			now:     fixed, manual: true, want: false, wantReason: "sync blocked by active deny window 0",
		},
		"an active deny window with manualSync lets manual syncs through": {
			windows: []v1alpha1.SyncWindow{manual(denyNow)},
			now:     fixed, manual: true, want: true, wantReason: "manual sync permitted during active deny window 0",
		},
		"an active deny window with manualSync still blocks automated syncs": {
			windows: []v1alpha1.SyncWindow{manual(denyNow)},
			now:     fixed, want: false, wantReason: "sync blocked by active deny window 0",
		},
		"manual syncs need manualSync on every active deny window": {
			windows: []v1alpha1.SyncWindow{manual(denyNow), {Kind: "deny", Schedule: "0 * * * *", Duration: "45m", Clusters: []string{"*"}}},
			now:     fixed, manual: true, want: false,
			wantReason: "sync blocked by active deny window 0 (schedule \"0 10 * * *\", duration 1h), deny window 1",
		},
		"an active deny window wins over an active allow window": {
			windows: []v1alpha1.SyncWindow{allowMorning, denyNow},
			now:     fixed, want: false, wantReason: "sync blocked by active deny window 1",
		},
		"an inactive deny window does not block": {
			windows: []v1alpha1.SyncWindow{denyNow},
			now:     at("2026-03-02T12:00:00Z"), want: true,
			wantReason: "no allow window applies and no deny window is active",
		},
		"an inactive deny window leaves an active allow window in charge": {
			windows: []v1alpha1.SyncWindow{denyNow, allowMorning},
			now:     at("2026-03-02T09:30:00Z"), want: true, wantReason: "sync allowed by active allow window 1",
		},
		"an allow window in another time zone is judged in that zone": {
			windows: []v1alpha1.SyncWindow{{Kind: "allow", Schedule: "0 9 * * *", Duration: "2h", Applications: []string{"*"}, TimeZone: "America/New_York"}},
			now:     fixed, want: false, // 05:30 in New York
			wantReason: "next opens at 2026-03-02T14:00:00Z",
		},
		"a bad cron schedule blocks every sync with a clear reason": {
			windows: []v1alpha1.SyncWindow{manual(v1alpha1.SyncWindow{Kind: "allow", Schedule: "0 25 * * *", Duration: "1h", Applications: []string{"*"}})},
			now:     fixed, manual: true, want: false,
			wantReason: `sync blocked: invalid sync window 0 of project p: cannot parse schedule "0 25 * * *" as a five-field cron expression: `,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, reason := CanSync(windows(tc.windows...), tc.now, "app", "ns", "https://c", tc.manual)
			if got != tc.want {
				t.Errorf("got %v (%s), want %v", got, reason, tc.want)
			}
			if !strings.Contains(reason, tc.wantReason) {
				t.Errorf("got reason %q, want it to contain %q", reason, tc.wantReason)
			}
		})
	}
}

func TestValidateSyncWindow(t *testing.T) {
	tests := map[string]struct {
		window  v1alpha1.SyncWindow
		wantErr string
	}{
		"a complete window is valid": {
			window: v1alpha1.SyncWindow{Kind: "deny", Schedule: "0 22 * * 1-5", Duration: "90m", TimeZone: "Asia/Tokyo"},
		},
		"cron ranges, lists and steps are valid": {
			window: v1alpha1.SyncWindow{Kind: "allow", Schedule: "*/15 8-17 1,15 * MON-FRI", Duration: "10m"},
		},
		"descriptors are not accepted, as in Argo CD": {
			window:  v1alpha1.SyncWindow{Kind: "allow", Schedule: "@daily", Duration: "1h"},
			wantErr: `cannot parse schedule "@daily" as a five-field cron expression: `,
		},
		"an empty schedule is invalid": {
			window:  v1alpha1.SyncWindow{Kind: "allow", Duration: "1h"},
			wantErr: `cannot parse schedule "" as a five-field cron expression: `,
		},
		"an empty duration is invalid": {
			window:  v1alpha1.SyncWindow{Kind: "allow", Schedule: "* * * * *"},
			wantErr: `cannot parse duration "": `,
		},
		"an empty kind is invalid": {
			window:  v1alpha1.SyncWindow{Schedule: "* * * * *", Duration: "1h"},
			wantErr: `kind "" is neither "allow" nor "deny"`,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			err := ValidateSyncWindow(tc.window)
			switch {
			case tc.wantErr == "" && err != nil:
				t.Errorf("got error %v, want none", err)
			case tc.wantErr != "" && (err == nil || !strings.HasPrefix(err.Error(), tc.wantErr)):
				t.Errorf("got error %v, want one starting with %q", err, tc.wantErr)
			}
		})
	}
}
