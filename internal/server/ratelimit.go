package server

import (
	"sync"
	"time"
)

// Failed logins are limited as Argo CD limits them: after maxFailures
// failures within failureWindow a user name (or client address) is refused
// until the oldest failure leaves the window.
const (
	defaultMaxLoginFailures = 5
	defaultFailureWindow    = 5 * time.Minute
	// maxTrackedKeys bounds the memory an attacker can make the limiter use.
	maxTrackedKeys = 10000
)

// failureLimiter counts recent failures per key. It is safe for concurrent use.
type failureLimiter struct {
	max     int
	window  time.Duration
	now     func() time.Time
	maxKeys int // maxTrackedKeys; tests set fewer

	mu    sync.Mutex
	fails map[string][]time.Time
}

func newFailureLimiter(max int, window time.Duration, now func() time.Time) *failureLimiter {
	if max <= 0 {
		max = defaultMaxLoginFailures
	}
	if window <= 0 {
		window = defaultFailureWindow
	}
	if now == nil {
		now = time.Now
	}
	return &failureLimiter{max: max, window: window, now: now, maxKeys: maxTrackedKeys, fails: map[string][]time.Time{}}
}

// recent drops failures older than the window and returns the rest; the
// caller holds mu.
func (l *failureLimiter) recent(key string, now time.Time) []time.Time {
	times := l.fails[key]
	i := 0
	for i < len(times) && !times[i].After(now.Add(-l.window)) {
		i++
	}
	times = times[i:]
	if len(times) == 0 {
		delete(l.fails, key)
		return nil
	}
	l.fails[key] = times
	return times
}

// Blocked reports whether key has used up its failures, and how long until
// it may try again.
func (l *failureLimiter) Blocked(key string) (time.Duration, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	times := l.recent(key, now)
	if len(times) < l.max {
		return 0, false
	}
	return times[len(times)-l.max].Add(l.window).Sub(now), true
}

// Fail records a failure of key.
func (l *failureLimiter) Fail(key string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	if _, ok := l.fails[key]; !ok && len(l.fails) >= l.maxKeys {
		l.evict(now)
	}
	l.fails[key] = append(l.recent(key, now), now)
}

// evict makes room for a key: it forgets the failures that left the
// window and, if none did, the key with the fewest failures (the one that
// failed longest ago among them), so that many keys failing once cannot
// push out one close to its limit. The caller holds mu.
func (l *failureLimiter) evict(now time.Time) {
	cutoff := now.Add(-l.window)
	victim, fewest, last := "", 0, time.Time{}
	for k, times := range l.fails {
		n := 0 // failures within the window; times are in order
		for n < len(times) && times[len(times)-1-n].After(cutoff) {
			n++
		}
		if n == 0 {
			delete(l.fails, k)
			continue
		}
		if t := times[len(times)-1]; victim == "" || n < fewest || (n == fewest && t.Before(last)) {
			victim, fewest, last = k, n, t
		}
	}
	if len(l.fails) >= l.maxKeys {
		delete(l.fails, victim)
	}
}

// Reset forgets the failures of key (after a successful login).
func (l *failureLimiter) Reset(key string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.fails, key)
}
