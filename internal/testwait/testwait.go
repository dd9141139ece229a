// Package testwait is how tests wait for something that happens in the
// background (a controller's pass, a watch event, a process exiting):
// Eventually polls a condition until it holds, Consistently checks that it
// keeps holding, and Until is Eventually for code without a *testing.T
// (TestMain, or a test that must clean up before it fails). Every wait is
// bounded in time and in the number of checks, and a failure names what was
// awaited and the last thing the condition saw.
//
// A condition is a func() bool, or a func() error that returns nil once it
// holds and otherwise an error saying what it saw instead:
//
//	testwait.Eventually(t, "the run to complete", func() error {
//		if err := c.Get(ctx, key, run); err != nil {
//			return err
//		}
//		if !run.Status.Phase.Completed() {
//			return fmt.Errorf("phase %s", run.Status.Phase)
//		}
//		return nil
//	}, testwait.Timeout(time.Minute))
package testwait

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Defaults for a wait without options.
const (
	DefaultTimeout  = 30 * time.Second
	DefaultInterval = 100 * time.Millisecond
)

// T is the part of testing.TB the waits use.
type T interface {
	Helper()
	Fatalf(format string, args ...any)
}

// Condition is what the waits poll: a func() bool holds when it returns
// true; a func() error holds when it returns nil, and its error is what a
// failed wait reports.
type Condition interface {
	func() bool | func() error
}

// Option changes a wait's bounds.
type Option func(*bounds)

// Timeout is how long Eventually and Until wait (default 30 s).
func Timeout(d time.Duration) Option { return func(b *bounds) { b.timeout = d } }

// Interval is the pause between two checks (default 100 ms).
func Interval(d time.Duration) Option { return func(b *bounds) { b.interval = d } }

type bounds struct {
	timeout, interval time.Duration
}

func boundsOf(opts []Option) bounds {
	b := bounds{timeout: DefaultTimeout, interval: DefaultInterval}
	for _, o := range opts {
		o(&b)
	}
	if b.interval <= 0 {
		b.interval = DefaultInterval
	}
	return b
}

// maxChecks bounds a wait by count as well as by time: one check per
// interval, plus the first and the one at the end.
func (b bounds) maxChecks(span time.Duration) int {
	return int(span/b.interval) + 2
}

// errFalse is what a func() bool condition "saw" when it returned false:
// nothing worth reporting.
var errFalse = errors.New("condition not met")

func checkOf[C Condition](cond C) func() error {
	switch c := any(cond).(type) {
	case func() bool:
		return func() error {
			if c() {
				return nil
			}
			return errFalse
		}
	case func() error:
		return c
	}
	panic("testwait: unreachable condition type")
}

// TimeoutError is Until's answer when the condition did not hold in time.
type TimeoutError struct {
	What    string
	Timeout time.Duration
	Checks  int
	Last    error // what the last check saw; nil for a func() bool
}

func (e *TimeoutError) Error() string {
	msg := fmt.Sprintf("timed out after %s waiting for %s (%d checks)", e.Timeout, e.What, e.Checks)
	if e.Last != nil {
		msg += ": " + e.Last.Error()
	}
	return msg
}

func (e *TimeoutError) Unwrap() error { return e.Last }

// Eventually checks cond until it holds and fails t if it has not held
// within the timeout.
func Eventually[C Condition](t T, what string, cond C, opts ...Option) {
	t.Helper()
	if err := Until(context.Background(), what, cond, opts...); err != nil {
		t.Fatalf("%v", err)
	}
}

// Until checks cond until it holds, ctx ends or the timeout passes; it
// returns nil once cond holds, a *TimeoutError after the timeout, and ctx's
// error (wrapped) when ctx ends first. The last check is made at the
// timeout, however long the interval.
func Until[C Condition](ctx context.Context, what string, cond C, opts ...Option) error {
	b := boundsOf(opts)
	check := checkOf(cond)
	deadline := time.Now().Add(b.timeout)
	var last error
	checks := 0
	for checks < b.maxChecks(b.timeout) {
		checks++
		if last = check(); last == nil {
			return nil
		}
		left := time.Until(deadline)
		if left <= 0 {
			break
		}
		if err := sleep(ctx, min(b.interval, left)); err != nil {
			return fmt.Errorf("waiting for %s: %w (last check: %v)", what, err, reported(last))
		}
	}
	if last == errFalse {
		last = nil
	}
	return &TimeoutError{What: what, Timeout: b.timeout, Checks: checks, Last: last}
}

// Consistently checks cond for the duration and fails t at the first check
// where it does not hold. It is the wait for "nothing happens": a test that
// slept and then looked once would miss a change undone in between.
func Consistently[C Condition](t T, what string, during time.Duration, cond C, opts ...Option) {
	t.Helper()
	b := boundsOf(opts)
	check := checkOf(cond)
	start := time.Now()
	end := start.Add(during)
	for checks := 1; checks <= b.maxChecks(during); checks++ {
		if err := check(); err != nil {
			t.Fatalf("%s stopped holding %s into %s (check %d): %v",
				what, time.Since(start).Round(time.Millisecond), during, checks, reported(err))
			return
		}
		left := time.Until(end)
		if left <= 0 {
			return
		}
		time.Sleep(min(b.interval, left))
	}
}

// reported is err as a failure message shows it.
func reported(err error) string {
	if err == errFalse {
		return "condition false"
	}
	return err.Error()
}

func sleep(ctx context.Context, d time.Duration) error {
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-timer.C:
		return nil
	}
}
