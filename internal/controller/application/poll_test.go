package application

import (
	"fmt"
	"testing"
	"time"
)

func TestPollSchedule(t *testing.T) {
	const period = 100 * time.Second
	t0 := time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)
	type comparison struct {
		after    time.Duration // since t0
		wantPoll bool
	}
	tests := map[string]struct {
		comparisons []comparison
		// randN as a fraction of n; 0 means n-1, the longest wait
		randFraction int64
		// the wait after the last comparison, as a range
		waitAtLeast, waitAtMost time.Duration
	}{
		"an app never compared is polled at once, next within the period": {
			comparisons: []comparison{{after: 0, wantPoll: true}},
			waitAtLeast: period, waitAtMost: period, // randN at its largest
		},
		"a comparison soon after a poll is not a poll and does not put the next one off": {
			comparisons: []comparison{{after: 0, wantPoll: true}, {after: 50 * time.Second, wantPoll: false}},
			waitAtLeast: 40 * time.Second, waitAtMost: 50 * time.Second,
		},
		"a comparison in the last fifth of the period is the poll, the next one within the period's last tenth": {
			comparisons: []comparison{{after: 0, wantPoll: true}, {after: 81 * time.Second, wantPoll: true}},
			waitAtLeast: 90 * time.Second, waitAtMost: 90 * time.Second, // randN at its largest
		},
		"after a short first wait, only the last fifth of that wait is early enough to be the poll": {
			comparisons: []comparison{
				{after: 0, wantPoll: true}, {after: 5 * time.Second, wantPoll: false}, {after: 9 * time.Second, wantPoll: true},
			},
			randFraction: 10, // a first wait of 10 s; the next wait 99 s
			waitAtLeast:  99 * time.Second, waitAtMost: 99 * time.Second,
		},
		"a poll taken late counts the next one from when it was due": {
			comparisons: []comparison{{after: 0, wantPoll: true}, {after: 130 * time.Second, wantPoll: true}},
			waitAtLeast: 60 * time.Second, waitAtMost: 60 * time.Second, // due at 100 s, next 90 s after that
		},
		"a poll taken more than a wait late skips the polls it missed": {
			comparisons: []comparison{{after: 0, wantPoll: true}, {after: 250 * time.Second, wantPoll: true}},
			waitAtLeast: 30 * time.Second, waitAtMost: 30 * time.Second, // due at 100 s; 190 s passed, 280 s is next
		},
		"a comparison just before the last fifth leaves the scheduled poll as it is": {
			comparisons: []comparison{{after: 0, wantPoll: true}, {after: 79 * time.Second, wantPoll: false}},
			waitAtLeast: 11 * time.Second, waitAtMost: 21 * time.Second,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			s := pollSchedule{randN: func(n int64) int64 {
				if tc.randFraction > 0 {
					return n / tc.randFraction
				}
				return n - 1
			}}
			var now time.Time
			for i, c := range tc.comparisons {
				now = t0.Add(c.after)
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

// Apps created together poll apart after their first poll: the first poll
// after a commit, which finds it for all of them, comes soon after it.
func TestFirstPollsSpreadOverThePeriod(t *testing.T) {
	const period, apps = 100 * time.Second, 100
	var s pollSchedule
	spread := takePolls(t, &s, apps, time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC), period)
	// Uniform over the period, 100 apps fall within half of it with a
	// chance of about 2^-93.
	if spread < period/2 {
		t.Errorf("the next polls of %d apps polled together fall within %s of each other", apps, spread)
	}
}

// Polls that fell due while a sync wave held their apps, taken together
// when it ends, keep the apps' polls apart: a commit after the wave is
// found as soon as after any other.
func TestPollsHeldByAWaveStaySpread(t *testing.T) {
	const period, apps = 100 * time.Second, 100
	start := time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)
	var s pollSchedule
	takePolls(t, &s, apps, start, period)
	// Every app's poll fell due during the wave.
	spread := takePolls(t, &s, apps, start.Add(period+time.Second), period)
	// The first polls spread uniformly; their phases, kept, fall within
	// half the period with a chance of about 2^-93.
	if spread < period/2 {
		t.Errorf("the next polls of %d apps held by a wave fall within %s of each other", apps, spread)
	}
}

// takePolls takes the poll of apps app-0… at now, each due by then, and
// returns how far apart their next polls fall.
func takePolls(t *testing.T, s *pollSchedule, apps int, now time.Time, period time.Duration) time.Duration {
	t.Helper()
	earliest, latest := period, time.Duration(0)
	for i := range apps {
		app := fmt.Sprintf("app-%d", i)
		if !s.take(app, now, period) {
			t.Fatalf("the comparison of %s at %s is not a poll", app, now)
		}
		wait := s.wait(app, now, period)
		if wait <= 0 || wait > period {
			t.Fatalf("%s polls next in %s, outside the period", app, wait)
		}
		earliest, latest = min(earliest, wait), max(latest, wait)
	}
	return latest - earliest
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

func TestPollsOffWithAZeroPeriod(t *testing.T) {
	var s pollSchedule
	now := time.Date(2026, 12, 7, 14, 0, 0, 0, time.UTC)
	if s.take("shop", now, 0) {
		t.Error("a comparison is a poll with polls off")
	}
	if wait := s.wait("shop", now, 0); wait != 0 {
		t.Errorf("wait %v with polls off, want none", wait)
	}
}

func TestSooner(t *testing.T) {
	tests := map[string]struct {
		a, b, want time.Duration
	}{
		"the sooner of two waits":              {a: time.Minute, b: time.Second, want: time.Second},
		"a later self-heal waits for the poll": {a: time.Second, b: time.Minute, want: time.Second},
		"no poll: the self-heal":               {a: 0, b: time.Minute, want: time.Minute},
		"no self-heal: the poll":               {a: time.Minute, b: 0, want: time.Minute},
		"neither: none":                        {a: 0, b: 0, want: 0},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := sooner(tc.a, tc.b); got != tc.want {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}

func TestHardRefreshDue(t *testing.T) {
	var h hardRefreshSchedule
	start := time.Date(2026, 12, 7, 14, 0, 0, 0, time.UTC)
	steps := []struct {
		at     time.Duration
		period time.Duration
		want   bool
	}{
		{at: 0, period: time.Hour, want: false},                // the first comparison starts the count
		{at: 30 * time.Minute, period: time.Hour, want: false}, // within the period
		{at: time.Hour, period: time.Hour, want: true},         // a period after the start
		{at: time.Hour + time.Minute, period: time.Hour, want: false},
		{at: 3 * time.Hour, period: 0, want: false}, // turned off
		{at: 3 * time.Hour, period: time.Hour, want: true},
	}
	for i, step := range steps {
		if got := h.due("shop", start.Add(step.at), step.period); got != step.want {
			t.Errorf("step %d (at %v, period %v): due %v, want %v", i, step.at, step.period, got, step.want)
		}
	}
}
