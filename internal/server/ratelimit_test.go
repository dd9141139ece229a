package server

import (
	"fmt"
	"maps"
	"slices"
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

func TestFailureLimiterEviction(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	type failure struct {
		key string
		at  time.Duration
	}
	tests := map[string]struct {
		failures []failure // into a table of three keys, then "new" fails
		at       time.Duration
		want     []string // the keys still tracked
	}{
		"a key whose failures left the window goes first": {
			failures: []failure{{"old", 0}, {"a", 4 * time.Minute}, {"a", 4 * time.Minute}, {"b", 4 * time.Minute}},
			at:       5*time.Minute + time.Second,
			want:     []string{"a", "b", "new"},
		},
		"the key with the fewest failures goes": {
			failures: []failure{{"admin", 0}, {"admin", 0}, {"admin", 0}, {"admin", 0}, {"x", time.Second}, {"y", time.Second}, {"y", time.Second}},
			at:       time.Minute,
			want:     []string{"admin", "new", "y"},
		},
		"among the fewest, the one that failed longest ago goes": {
			failures: []failure{{"x", 2 * time.Second}, {"y", time.Second}, {"z", 3 * time.Second}},
			at:       time.Minute,
			want:     []string{"new", "x", "z"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			now := start
			l := newFailureLimiter(5, 5*time.Minute, func() time.Time { return now })
			l.maxKeys = 3
			for _, f := range tc.failures {
				now = start.Add(f.at)
				l.Fail(f.key)
			}
			now = start.Add(tc.at)
			l.Fail("new")
			got := slices.Sorted(maps.Keys(l.fails))
			if !slices.Equal(got, tc.want) {
				t.Errorf("tracked %v, want %v", got, tc.want)
			}
		})
	}
}

// More made-up names than a limiter tracks, each failing as often as admin
// did and later, from as many addresses: admin's count survives and its
// next failure blocks it.
func TestLocalAccountFailuresOutliveAFloodOfUnknownNames(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	s := &Server{Now: func() time.Time { return now }}
	s.init()
	st := &settings{accounts: parseAccounts(nil, nil)}
	admin := s.loginLimits(st, "admin", "203.0.113.7")[0]
	for range defaultMaxLoginFailures - 1 {
		admin.limiter.Fail(admin.key)
	}
	for i := range maxTrackedKeys + 2000 {
		for _, l := range s.loginLimits(st, fmt.Sprintf("made-up-%d", i), fmt.Sprintf("198.51.%d.%d", i/256, i%256)) {
			for range defaultMaxLoginFailures - 1 {
				l.limiter.Fail(l.key)
			}
		}
		now = now.Add(time.Millisecond)
	}
	if _, blocked := admin.limiter.Blocked(admin.key); blocked {
		t.Fatal("admin is blocked before its fifth failure")
	}
	admin.limiter.Fail(admin.key)
	if _, blocked := admin.limiter.Blocked(admin.key); !blocked {
		t.Error("admin's earlier failures were forgotten in the flood: its fifth failure does not block it")
	}
}
