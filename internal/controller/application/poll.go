package application

import (
	"math/rand/v2"
	"sync"
	"time"
)

// pollSchedule remembers, per app, when its comparison last asked git for
// new commits and when it must ask next. The next poll is fixed when a poll
// happens, so comparisons triggered in between (live changes, operation
// results, refreshes) never push it back: a commit is noticed within one
// period. An app's first poll schedules the second anywhere within the
// period, so that apps created together poll apart: the first poll after a
// commit finds it for every app of the repository (compareAppsOnMove), and
// with polls spread that poll comes soon after the commit.
type pollSchedule struct {
	mu    sync.Mutex
	polls map[string]pollTimes
	// randN returns a number in [0, n); nil means math/rand/v2's.
	randN func(n int64) int64
}

type pollTimes struct {
	last, next time.Time
}

// A comparison in the last fifth of the time between the previous poll
// and the next is the next poll: it spares a wake-up shortly after it.
const pollEarlyFraction = 5

// take reports whether a comparison of app at now is its periodic poll,
// which asks git for new commits; when it is, the next one is scheduled.
// Other comparisons (a live change, an operation's result) reuse the
// resolved revision and cost no git call.
func (s *pollSchedule) take(app string, now time.Time, period time.Duration) bool {
	if period <= 0 {
		return false // polls are off (timeout.reconciliation: 0)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	p, ok := s.polls[app]
	if ok && now.Before(p.next.Add(-p.next.Sub(p.last)/pollEarlyFraction)) {
		return false
	}
	if s.polls == nil {
		s.polls = map[string]pollTimes{}
	}
	wait := period - time.Duration(s.rand(int64(period)/10+1)) // the last tenth of the period
	if !ok {
		wait = time.Duration(s.rand(int64(period))) + 1 // anywhere within it
	}
	s.polls[app] = pollTimes{last: now, next: nextPoll(p.next, now, wait)}
	return true
}

// nextPoll is when the poll after one taken at now, due at due (zero for
// an app's first), comes: wait after due, the first such time after now.
// A poll taken late (held while the app's operation ran) keeps its phase:
// counted from when it was taken, the polls of the apps a long sync wave
// held would all come a period after the wave, and a commit made in
// between would wait for them.
func nextPoll(due, now time.Time, wait time.Duration) time.Time {
	if due.IsZero() || !due.Before(now) {
		return now.Add(wait)
	}
	return due.Add(wait * (now.Sub(due)/wait + 1))
}

func (s *pollSchedule) rand(n int64) int64 {
	if s.randN != nil {
		return s.randN(n)
	}
	return rand.Int64N(n)
}

// wait is how long from now until app's next poll; a whole period for an
// app never polled; 0 (none) when polls are off.
func (s *pollSchedule) wait(app string, now time.Time, period time.Duration) time.Duration {
	if period <= 0 {
		return 0
	}
	s.mu.Lock()
	p, ok := s.polls[app]
	s.mu.Unlock()
	if !ok {
		return period
	}
	return max(p.next.Sub(now), time.Millisecond)
}

// forget drops a deleted app's schedule.
func (s *pollSchedule) forget(app string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.polls, app)
}

// pollShareWindow is how old a resolved revision a poll may reuse, so that
// apps of one repository polled close together share one ls-remote: a
// thirtieth of the period, between one and ten seconds. It adds to how late
// a commit is noticed, so it shrinks with a short period.
func pollShareWindow(period time.Duration) time.Duration {
	return min(max(period/30, time.Second), 10*time.Second)
}

// hardRefreshSchedule remembers when each app's comparison last rendered
// past the caches for timeout.hard.reconciliation.
type hardRefreshSchedule struct {
	mu   sync.Mutex
	last map[string]time.Time
}

// due reports whether app's comparison at now renders past the caches: a
// period after the last that did (its first comparison starts the count);
// never with period 0. A due one is recorded.
func (h *hardRefreshSchedule) due(app string, now time.Time, period time.Duration) bool {
	if period <= 0 {
		return false
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.last == nil {
		h.last = map[string]time.Time{}
	}
	last, ok := h.last[app]
	if ok && now.Sub(last) < period {
		return false
	}
	h.last[app] = now
	return ok
}

// forget drops a deleted app's schedule.
func (h *hardRefreshSchedule) forget(app string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.last, app)
}
