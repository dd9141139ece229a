package appcli

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/skiffcd/skiff/api/v1alpha1"
)

// Initiator names the CLI as the user who started an operation.
var Initiator = v1alpha1.OperationInitiator{Username: "skiff-cli"}

// OperationRunning reports whether app has an operation requested or running.
func OperationRunning(app *v1alpha1.Application) bool {
	if app.Operation != nil {
		return true
	}
	s := app.Status.OperationState
	return s != nil && s.FinishedAt == nil && (s.Phase == v1alpha1.OperationRunning || s.Phase == v1alpha1.OperationTerminating)
}

// OperationError is returned when an operation ends without success.
type OperationError struct {
	Phase   v1alpha1.OperationPhase
	Message string
}

func (e *OperationError) Error() string {
	return fmt.Sprintf("operation %s: %s", e.Phase, e.Message)
}

// sameOperationState reports whether a and b are the state of the same
// operation.
func sameOperationState(a, b *v1alpha1.OperationState) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Phase == b.Phase && a.Message == b.Message && a.StartedAt.Equal(&b.StartedAt) && a.FinishedAt.Equal(b.FinishedAt)
}

// ErrTimeout is returned when a wait runs out of time.
var ErrTimeout = errors.New("timed out")

// Conditions say what Wait waits for.
type Conditions struct {
	// Sync waits for Synced, Health for Healthy, Operation for no operation.
	Sync, Health, Operation bool
}

// Describe names what is waited for.
func (c Conditions) Describe() string {
	var parts []string
	if c.Sync {
		parts = append(parts, "sync")
	}
	if c.Health {
		parts = append(parts, "health")
	}
	if c.Operation {
		parts = append(parts, "operation")
	}
	if len(parts) == 0 {
		return "nothing"
	}
	return strings.Join(parts, ", ")
}

// Met reports whether app meets every condition.
func (c Conditions) Met(app *v1alpha1.Application) bool {
	if c.Sync && app.Status.Sync.Status != v1alpha1.SyncStatusCodeSynced {
		return false
	}
	if c.Health && app.Status.Health.Status != v1alpha1.HealthStatusHealthy {
		return false
	}
	if c.Operation && OperationRunning(app) {
		return false
	}
	return true
}

// Waiter polls an Application.
type Waiter struct {
	Backend Backend
	// Interval between reads; zero means 500 ms.
	Interval time.Duration
	// OnUpdate, when set, sees every version read.
	OnUpdate func(*v1alpha1.Application)
}

// Until follows the Application name until done holds, ctx ends
// (ErrTimeout when it ran out of time) or done returns an error, and
// returns the last version seen. It follows a Watcher's stream, or reads
// every Interval when the Backend has none or its stream fails.
func (w Waiter) Until(ctx context.Context, name string, done func(*v1alpha1.Application) (bool, error)) (*v1alpha1.Application, error) {
	var app *v1alpha1.Application
	see := func(read *v1alpha1.Application) (bool, error) {
		app = read
		if w.OnUpdate != nil {
			w.OnUpdate(app)
		}
		return done(app)
	}
	if watcher, ok := w.Backend.(Watcher); ok {
		err := watcher.Watch(ctx, name, see)
		var streamErr *StreamError
		switch {
		case err == nil:
			return app, nil
		case ctx.Err() != nil:
			return app, ended(ctx)
		case !errors.As(err, &streamErr):
			return app, err
		}
		// The stream failed: read instead.
	}
	interval := w.Interval
	if interval == 0 {
		interval = 500 * time.Millisecond
	}
	ticker := time.NewTicker(interval)
	defer ticker.Stop()
	for {
		// Each read gets its own short deadline: the client's rate limiter
		// fails early on a wait's deadline, which is not a read error.
		readCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		read, err := w.Backend.Get(readCtx, name, "")
		cancel()
		if err != nil {
			return app, err
		}
		if ok, err := see(read); err != nil || ok {
			return app, err
		}
		select {
		case <-ctx.Done():
			return app, ended(ctx)
		case <-ticker.C:
		}
	}
}

// ended is the error of a wait whose ctx ended: ErrTimeout when it ran
// out of time.
func ended(ctx context.Context) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return ErrTimeout
	}
	return ctx.Err()
}

// Wait waits until the Application name meets conds.
func (w Waiter) Wait(ctx context.Context, name string, conds Conditions) (*v1alpha1.Application, error) {
	app, err := w.Until(ctx, name, func(app *v1alpha1.Application) (bool, error) { return conds.Met(app), nil })
	if errors.Is(err, ErrTimeout) {
		return app, fmt.Errorf("waiting for %s of application %s: %w", conds.Describe(), name, err)
	}
	return app, err
}

// WaitOperation waits until the operation requested on name is done, and
// returns an *OperationError when it did not succeed. requested is the
// Application as the request wrote it: a read older than the request (a
// server's cache may lag behind its writes) shows no operation but the
// state of the previous one, which is not taken for the requested one's.
//
// Like argocd it also waits for a comparison after the operation, so that
// the resources' status is the one the operation left: timestamps have
// seconds only, so unless the app was compared in a later second it asks
// for a refresh and waits for a version compared after the one that
// finished the operation.
func (w Waiter) WaitOperation(ctx context.Context, name string, requested *v1alpha1.Application) (*v1alpha1.Application, error) {
	previous := requested.Status.OperationState
	started := false
	finishedVersion := ""
	app, err := w.Until(ctx, name, func(app *v1alpha1.Application) (bool, error) {
		if OperationRunning(app) {
			started = true
			return false, nil
		}
		if !started && sameOperationState(app.Status.OperationState, previous) {
			return false, nil
		}
		s := app.Status.OperationState
		if s == nil || s.FinishedAt == nil {
			return true, nil
		}
		compared := app.Status.ReconciledAt
		if finishedVersion == "" {
			finishedVersion = app.ResourceVersion
			if compared != nil && compared.After(s.FinishedAt.Time) {
				return true, nil
			}
			refreshCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
			defer cancel()
			if _, err := w.Backend.Get(refreshCtx, name, v1alpha1.RefreshNormal); err != nil {
				return true, nil // the status as it is, then
			}
			return false, nil
		}
		return app.ResourceVersion != finishedVersion && app.Annotations[v1alpha1.AnnotationRefresh] == "" &&
			compared != nil && !compared.Before(s.FinishedAt), nil
	})
	if errors.Is(err, ErrTimeout) {
		return app, fmt.Errorf("waiting for the operation on application %s: %w", name, err)
	}
	if err != nil {
		return app, err
	}
	s := app.Status.OperationState
	if s == nil {
		return app, &OperationError{Phase: v1alpha1.OperationError, Message: "the operation was removed before it ran"}
	}
	if s.Phase != v1alpha1.OperationSucceeded {
		return app, &OperationError{Phase: s.Phase, Message: s.Message}
	}
	return app, nil
}
