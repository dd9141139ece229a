package server

import (
	"testing"
	"time"
)

func TestFailureLimiter(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	tests := map[string]struct {
		failures    []time.Duration // offsets from start
		at          time.Duration
		wantBlocked bool
		wantWait    time.Duration
	}{
		"four failures leave the key free": {
			failures: []time.Duration{0, time.Second, 2 * time.Second, 3 * time.Second},
			at:       4 * time.Second,
		},
		"five failures within the window block the key until the oldest leaves it": {
			failures:    []time.Duration{0, time.Second, 2 * time.Second, 3 * time.Second, 4 * time.Second},
			at:          10 * time.Second,
			wantBlocked: true,
			wantWait:    5*time.Minute - 10*time.Second,
		},
		"failures older than the window no longer count": {
			failures: []time.Duration{0, time.Second, 2 * time.Second, 3 * time.Second, 4 * time.Second},
			at:       5*time.Minute + 500*time.Millisecond,
		},
		"six failures block until the second oldest leaves the window": {
			failures:    []time.Duration{0, time.Minute, time.Minute, time.Minute, time.Minute, 2 * time.Minute},
			at:          5*time.Minute + time.Second,
			wantBlocked: true,
			wantWait:    59 * time.Second,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			now := start
			l := newFailureLimiter(5, 5*time.Minute, func() time.Time { return now })
			for _, off := range tc.failures {
				now = start.Add(off)
				l.Fail("user:alice")
			}
			now = start.Add(tc.at)
			wait, blocked := l.Blocked("user:alice")
			if blocked != tc.wantBlocked || wait != tc.wantWait {
				t.Errorf("Blocked = %v, %v; want %v, %v", wait, blocked, tc.wantWait, tc.wantBlocked)
			}
			if _, other := l.Blocked("user:bob"); other {
				t.Error("another key is blocked too")
			}
		})
	}
}

func TestFailureLimiterResetAndBound(t *testing.T) {
	now := time.Now()
	l := newFailureLimiter(2, time.Minute, func() time.Time { return now })
	l.Fail("k")
	l.Fail("k")
	if _, blocked := l.Blocked("k"); !blocked {
		t.Fatal("not blocked after two failures")
	}
	l.Reset("k")
	if _, blocked := l.Blocked("k"); blocked {
		t.Fatal("blocked after reset")
	}
	for i := range maxTrackedKeys + 10 {
		l.Fail(string(rune(i)))
	}
	if n := len(l.fails); n > maxTrackedKeys {
		t.Errorf("tracking %d keys, more than %d", n, maxTrackedKeys)
	}
}
