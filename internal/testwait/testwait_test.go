package testwait

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// recorder is a T that keeps the failure instead of ending the test.
type recorder struct {
	failures []string
}

func (r *recorder) Helper() {}

func (r *recorder) Fatalf(format string, args ...any) {
	r.failures = append(r.failures, fmt.Sprintf(format, args...))
}

// holdsFrom is a condition that fails until its nth check and holds from
// then on; it counts its checks.
func holdsFrom(n int64, checks *atomic.Int64) func() error {
	return func() error {
		if c := checks.Add(1); c < n {
			return fmt.Errorf("check %d saw nothing yet", c)
		}
		return nil
	}
}

func TestEventually(t *testing.T) {
	tests := map[string]struct {
		cond       func(checks *atomic.Int64) any
		opts       []Option
		wantChecks int64 // 0: not checked
		wantFail   []string
	}{
		"a condition that holds at once is checked once": {
			cond:       func(n *atomic.Int64) any { return holdsFrom(1, n) },
			wantChecks: 1,
		},
		"a condition that holds on its third check ends the wait there": {
			cond:       func(n *atomic.Int64) any { return holdsFrom(3, n) },
			opts:       []Option{Interval(time.Millisecond)},
			wantChecks: 3,
		},
		"a condition that never holds fails naming what was awaited and what it saw last": {
			cond:     func(n *atomic.Int64) any { return holdsFrom(1000, n) },
			opts:     []Option{Timeout(50 * time.Millisecond), Interval(10 * time.Millisecond)},
			wantFail: []string{"timed out after 50ms waiting for the thing", "saw nothing yet"},
		},
		"a func() bool condition is polled like a func() error": {
			cond: func(n *atomic.Int64) any {
				return func() bool { return n.Add(1) >= 2 }
			},
			opts:       []Option{Interval(time.Millisecond)},
			wantChecks: 2,
		},
		"a func() bool condition that never holds fails naming what was awaited": {
			cond:     func(n *atomic.Int64) any { return func() bool { n.Add(1); return false } },
			opts:     []Option{Timeout(20 * time.Millisecond), Interval(5 * time.Millisecond)},
			wantFail: []string{"timed out after 20ms waiting for the thing"},
		},
		"the last check is made at the timeout even when the interval is longer": {
			cond:       func(n *atomic.Int64) any { return holdsFrom(2, n) },
			opts:       []Option{Timeout(20 * time.Millisecond), Interval(time.Hour)},
			wantChecks: 2,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			var checks atomic.Int64
			r := &recorder{}
			switch cond := tc.cond(&checks).(type) {
			case func() error:
				Eventually(r, "the thing", cond, tc.opts...)
			case func() bool:
				Eventually(r, "the thing", cond, tc.opts...)
			}
			if len(tc.wantFail) == 0 {
				if len(r.failures) != 0 {
					t.Fatalf("failed: %v", r.failures)
				}
				if got := checks.Load(); got != tc.wantChecks {
					t.Errorf("%d checks, want %d", got, tc.wantChecks)
				}
				return
			}
			if len(r.failures) != 1 {
				t.Fatalf("failures %q, want one", r.failures)
			}
			for _, want := range tc.wantFail {
				if !strings.Contains(r.failures[0], want) {
					t.Errorf("failure %q does not say %q", r.failures[0], want)
				}
			}
		})
	}
}

// A wait is bounded by count too: never more checks than intervals fit in
// its timeout, plus the first and the last.
func TestUntilChecksAtMostOncePerInterval(t *testing.T) {
	var checks atomic.Int64
	err := Until(context.Background(), "never", func() bool { checks.Add(1); return false },
		Timeout(50*time.Millisecond), Interval(10*time.Millisecond))
	var timeout *TimeoutError
	if !errors.As(err, &timeout) {
		t.Fatalf("Until() = %v, want a *TimeoutError", err)
	}
	if got := checks.Load(); got < 2 || got > 7 || int64(timeout.Checks) != got {
		t.Errorf("%d checks (error says %d), want between 2 and 7 for 50ms at 10ms", got, timeout.Checks)
	}
	if timeout.Last != nil {
		t.Errorf("a func() bool condition reported %v as what it saw", timeout.Last)
	}
}

// A context that ends stops the wait with the context's error, not a
// timeout.
func TestUntilStopsWhenItsContextEnds(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := Until(ctx, "never", func() error { return errors.New("still nothing") }, Timeout(2*time.Second))
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "still nothing") {
		t.Errorf("Until() = %v, want context.Canceled with the last check's error", err)
	}
}

func TestConsistently(t *testing.T) {
	tests := map[string]struct {
		cond       func(checks *atomic.Int64) any
		wantChecks int64
		wantFail   []string
	}{
		"a condition that keeps holding passes after being checked throughout": {
			cond:       func(n *atomic.Int64) any { return func() bool { n.Add(1); return true } },
			wantChecks: 6, // at 0, 10, 20, 30, 40 and 50 ms, at most
		},
		"a condition that stops holding fails at that check, naming what and why": {
			cond: func(n *atomic.Int64) any {
				return func() error {
					if n.Add(1) == 3 {
						return errors.New("a second message came")
					}
					return nil
				}
			},
			wantChecks: 3,
			wantFail:   []string{"no more messages stopped holding", "check 3", "a second message came"},
		},
		"a func() bool condition false from the start fails at the first check": {
			cond:       func(n *atomic.Int64) any { return func() bool { n.Add(1); return false } },
			wantChecks: 1,
			wantFail:   []string{"no more messages stopped holding", "check 1", "condition false"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			var checks atomic.Int64
			r := &recorder{}
			opts := []Option{Interval(10 * time.Millisecond)}
			switch cond := tc.cond(&checks).(type) {
			case func() error:
				Consistently(r, "no more messages", 50*time.Millisecond, cond, opts...)
			case func() bool:
				Consistently(r, "no more messages", 50*time.Millisecond, cond, opts...)
			}
			got := checks.Load()
			if len(tc.wantFail) == 0 {
				if len(r.failures) != 0 {
					t.Fatalf("failed: %v", r.failures)
				}
				// Checked more than once, and not more often than the interval.
				if got < 2 || got > tc.wantChecks {
					t.Errorf("%d checks, want 2 to %d", got, tc.wantChecks)
				}
				return
			}
			if got != tc.wantChecks {
				t.Errorf("%d checks, want %d: the wait goes on after the condition failed", got, tc.wantChecks)
			}
			if len(r.failures) != 1 {
				t.Fatalf("failures %q, want one", r.failures)
			}
			for _, want := range tc.wantFail {
				if !strings.Contains(r.failures[0], want) {
					t.Errorf("failure %q does not say %q", r.failures[0], want)
				}
			}
		})
	}
}
