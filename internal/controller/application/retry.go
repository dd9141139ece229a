package application

import (
	"strconv"
	"time"

	"github.com/skiffcd/skiff/api/v1alpha1"
)

// operationStep is what the operation worker does with an app's operation.
type operationStep int

const (
	// stepBegin records the operation's start, then runs it.
	stepBegin operationStep = iota
	// stepTerminate ends the operation as terminated, without running it.
	stepTerminate
	// stepWaitForRetry waits for a failed attempt's back-off.
	stepWaitForRetry
	// stepRetry runs a failed attempt again, afresh: its back-off is over.
	stepRetry
	// stepResume runs an operation whose run was interrupted (a restart),
	// taking over the hook results it recorded.
	stepResume
)

// nextOperationStep decides, at now, what the operation worker does with
// app's operation (app.Operation is set), and for stepWaitForRetry how long
// it waits. An operation the recorded state does not show running is new
// (a state for another operation means a new request replaced it); one a
// user set Terminating ends; one Running with a finishedAt is a failed
// attempt waiting for its retry; one Running without is resumed.
func nextOperationStep(app *v1alpha1.Application, now time.Time) (operationStep, time.Duration) {
	state := app.Status.OperationState
	switch {
	case state != nil && state.Phase == v1alpha1.OperationTerminating:
		return stepTerminate, 0
	case state == nil || state.Phase != v1alpha1.OperationRunning || !equalJSON(state.Operation, *app.Operation):
		return stepBegin, 0
	case state.FinishedAt != nil:
		if wait := retryDue(app).Sub(now); wait > 0 {
			return stepWaitForRetry, wait
		}
		return stepRetry, 0
	}
	return stepResume, 0
}

// retryAfterFailure decides whether the attempt of app's operation that
// failed at now is retried, and when: per its retry strategy (a negative
// limit retries for ever), after the back-off of the attempts so far.
func retryAfterFailure(app *v1alpha1.Application, now time.Time) (due time.Time, retry bool) {
	strategy := retryStrategy(app)
	attempts := app.Status.OperationState.RetryCount
	if strategy.Limit >= 0 && attempts >= strategy.Limit {
		return time.Time{}, false
	}
	return now.Add(backoff(strategy.Backoff, attempts)), true
}

// retryStrategy is how app's operation is retried when it fails: the
// operation's own strategy, else syncPolicy.retry.
func retryStrategy(app *v1alpha1.Application) v1alpha1.RetryStrategy {
	retry := app.Operation.Retry
	if app.Spec.SyncPolicy != nil && app.Spec.SyncPolicy.Retry != nil && retry.Limit == 0 {
		retry = *app.Spec.SyncPolicy.Retry
	}
	return retry
}

// retryDue is when the retry of app's failed attempt may run: its back-off
// after the attempt ended (retryOrFail recorded both).
func retryDue(app *v1alpha1.Application) time.Time {
	state := app.Status.OperationState
	return state.FinishedAt.Add(backoff(retryStrategy(app).Backoff, max(state.RetryCount-1, 0)))
}

// backoff is Argo CD's retry back-off: duration × factor^attempt, capped.
func backoff(b *v1alpha1.Backoff, attempt int64) time.Duration {
	d, factor, maxD := 5*time.Second, int64(2), 3*time.Minute
	if b != nil {
		if v, ok := parseDuration(b.Duration); ok {
			d = v
		}
		if b.Factor != nil {
			factor = *b.Factor
		}
		if v, ok := parseDuration(b.MaxDuration); ok {
			maxD = v
		}
	}
	return exponentialBackoff(d, factor, maxD, attempt)
}

// exponentialBackoff is base × factor^attempts, capped at maxD.
func exponentialBackoff(base time.Duration, factor int64, maxD time.Duration, attempts int64) time.Duration {
	d := base
	for i := int64(0); i < attempts && d < maxD; i++ {
		d *= time.Duration(factor)
	}
	return min(d, maxD)
}

func parseDuration(s string) (time.Duration, bool) {
	if s == "" {
		return 0, false
	}
	if n, err := strconv.Atoi(s); err == nil {
		return time.Duration(n) * time.Second, true
	}
	d, err := time.ParseDuration(s)
	return d, err == nil
}
