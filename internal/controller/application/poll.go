package application

import (
	"math/rand/v2"
	"sync"
	"time"
)

// pollSchedule remembers, per app, when its comparison last asked git for
// new commits and when it must ask next. The next poll is fixed when a poll
// happens, so comparisons triggered in between (live changes, operation
// results) never push it back: a commit is noticed within one period.
type pollSchedule struct {
	mu    sync.Mutex
	polls map[string]pollTimes
}

type pollTimes struct {
	last, next time.Time
}

// A comparison in the last fifth of the period since the previous poll is
// the poll: it spares a wake-up shortly after it.
const pollEarlyFraction = 5

// take reports whether a comparison of app at now is its periodic poll,
// which asks git for new commits; when it is, the next one is scheduled.
// Other comparisons (a live change, an operation's result) reuse the
// resolved revision and cost no git call.
func (s *pollSchedule) take(app string, now time.Time, period time.Duration) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, ok := s.polls[app]
	if ok && now.Sub(p.last) < period-period/pollEarlyFraction {
		return false
	}
	s.setLocked(app, now, period)
	return true
}

// polled records that a comparison of app at now asked git (a refresh),
// which counts as this period's poll.
func (s *pollSchedule) polled(app string, now time.Time, period time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.setLocked(app, now, period)
}

func (s *pollSchedule) setLocked(app string, now time.Time, period time.Duration) {
	if s.polls == nil {
		s.polls = map[string]pollTimes{}
	}
	s.polls[app] = pollTimes{last: now, next: now.Add(jitteredPeriod(period))}
}

// wait is how long from now until app's next poll; a whole period for an
// app never polled.
func (s *pollSchedule) wait(app string, now time.Time, period time.Duration) time.Duration {
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

// jitteredPeriod spreads polls over the last tenth of the period, never
// beyond it: the period is the promise of how late a commit can be noticed.
func jitteredPeriod(period time.Duration) time.Duration {
	return period - time.Duration(rand.Int64N(int64(period)/10+1))
}

// pollShareWindow is how old a resolved revision a poll may reuse, so that
// apps of one repository polled close together share one ls-remote: a
// thirtieth of the period, between one and ten seconds. It adds to how late
// a commit is noticed, so it shrinks with a short period.
func pollShareWindow(period time.Duration) time.Duration {
	return min(max(period/30, time.Second), 10*time.Second)
}
