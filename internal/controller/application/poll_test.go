package application

import (
	"testing"
	"time"
)

func TestPollSchedule(t *testing.T) {
	const period = 100 * time.Second
	t0 := time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)
	type comparison struct {
		after    time.Duration // since t0
		refresh  bool
		wantPoll bool
	}
	tests := map[string]struct {
		comparisons []comparison
		// the wait after the last comparison, as a range
		waitAtLeast, waitAtMost time.Duration
	}{
		"an app never compared is polled at once, next at 90-100 % of the period": {
			comparisons: []comparison{{after: 0, wantPoll: true}},
			waitAtLeast: 90 * time.Second, waitAtMost: period,
		},
		"a comparison soon after a poll is not a poll and does not put the next one off": {
			comparisons: []comparison{{after: 0, wantPoll: true}, {after: 50 * time.Second, wantPoll: false}},
			waitAtLeast: 40 * time.Second, waitAtMost: 50 * time.Second,
		},
		"a comparison in the last fifth of the period is the poll": {
			comparisons: []comparison{{after: 0, wantPoll: true}, {after: 81 * time.Second, wantPoll: true}},
			waitAtLeast: 90 * time.Second, waitAtMost: period,
		},
		"a refresh counts as the period's poll": {
			comparisons: []comparison{
				{after: 0, wantPoll: true}, {after: 30 * time.Second, refresh: true}, {after: 90 * time.Second, wantPoll: false},
			},
			waitAtLeast: 30 * time.Second, waitAtMost: 40 * time.Second,
		},
		"a comparison just before the last fifth leaves the scheduled poll as it is": {
			comparisons: []comparison{{after: 0, wantPoll: true}, {after: 79 * time.Second, wantPoll: false}},
			waitAtLeast: 11 * time.Second, waitAtMost: 21 * time.Second,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			var s pollSchedule
			var now time.Time
			for i, c := range tc.comparisons {
				now = t0.Add(c.after)
				if c.refresh {
					s.polled("app", now, period)
					continue
				}
				if got := s.take("app", now, period); got != c.wantPoll {
					t.Fatalf("comparison %d at +%s: poll = %t, want %t", i, c.after, got, c.wantPoll)
				}
			}
			if got := s.wait("app", now, period); got < tc.waitAtLeast || got > tc.waitAtMost {
				t.Errorf("wait = %s, want between %s and %s", got, tc.waitAtLeast, tc.waitAtMost)
			}
			s.forget("app")
			if got := s.wait("app", now, period); got != period {
				t.Errorf("wait after forget = %s, want the period", got)
			}
		})
	}
}

func TestPollShareWindow(t *testing.T) {
	tests := map[string]struct {
		period, want time.Duration
	}{
		"a short period shares for a second":       {period: 3 * time.Second, want: time.Second},
		"the benchmark's 30 s period for a second": {period: 30 * time.Second, want: time.Second},
		"the default 180 s period for six seconds": {period: 180 * time.Second, want: 6 * time.Second},
		"a long period for at most ten seconds":    {period: time.Hour, want: 10 * time.Second},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := pollShareWindow(tc.period); got != tc.want {
				t.Errorf("pollShareWindow(%s) = %s, want %s", tc.period, got, tc.want)
			}
		})
	}
}
