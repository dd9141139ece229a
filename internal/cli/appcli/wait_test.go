package appcli

import (
	"context"
	"errors"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/skiffcd/skiff/api/v1alpha1"
)

// reads is a Backend whose Get answers the versions in turn, the last one
// for ever; it counts the refreshes asked for apart.
type reads struct {
	Backend
	versions  []*v1alpha1.Application
	n         int
	refreshes int
}

func (r *reads) Get(_ context.Context, _, refresh string) (*v1alpha1.Application, error) {
	if refresh != "" {
		r.refreshes++
		return nil, nil
	}
	app := r.versions[min(r.n, len(r.versions)-1)]
	r.n++
	return app.DeepCopy(), nil
}

func withState(phase v1alpha1.OperationPhase, started time.Time, finished bool, op bool) *v1alpha1.Application {
	app := &v1alpha1.Application{}
	app.Name = "web"
	s := &v1alpha1.OperationState{Phase: phase, StartedAt: metav1.NewTime(started)}
	if finished {
		at := metav1.NewTime(started.Add(time.Second))
		s.FinishedAt = &at
		compared := metav1.NewTime(at.Add(time.Second)) // in the next second
		app.Status.ReconciledAt = &compared
	}
	app.Status.OperationState = s
	if op {
		app.Operation = &v1alpha1.Operation{Sync: &v1alpha1.SyncOperation{}}
	}
	return app
}

// WaitOperation does not take the previous operation's state, read from a
// cache behind the request, for the requested one's, and waits for a
// comparison after the operation.
func TestWaitOperationIgnoresReadsOlderThanTheRequest(t *testing.T) {
	t0 := time.Date(2026, 12, 4, 8, 0, 0, 0, time.UTC)
	previous := withState(v1alpha1.OperationSucceeded, t0, true, false)
	requested := withState(v1alpha1.OperationSucceeded, t0, true, true)
	running := withState(v1alpha1.OperationRunning, t0.Add(time.Minute), false, true)
	failed := withState(v1alpha1.OperationFailed, t0.Add(time.Minute), true, false)
	failed.Status.OperationState.Message = "boom"
	// Compared in the second the operation finished: before or after?
	sameSecond := failed.DeepCopy()
	sameSecond.ResourceVersion = "10"
	sameSecond.Status.ReconciledAt = sameSecond.Status.OperationState.FinishedAt
	refreshing := sameSecond.DeepCopy()
	refreshing.ResourceVersion = "11"
	refreshing.Annotations = map[string]string{v1alpha1.AnnotationRefresh: v1alpha1.RefreshNormal}
	refreshed := sameSecond.DeepCopy()
	refreshed.ResourceVersion = "12"
	tests := map[string]struct {
		versions []*v1alpha1.Application
		// requested defaults to an app whose previous operation succeeded.
		requested     *v1alpha1.Application
		wantPhase     v1alpha1.OperationPhase
		wantReads     int
		wantRefreshes int
	}{
		"stale, running, done":    {versions: []*v1alpha1.Application{previous, running, failed}, wantPhase: v1alpha1.OperationFailed, wantReads: 3},
		"stale, then done unseen": {versions: []*v1alpha1.Application{previous, previous, failed}, wantPhase: v1alpha1.OperationFailed, wantReads: 3},
		"compared in the same second": {versions: []*v1alpha1.Application{running, sameSecond, sameSecond, refreshing, refreshed},
			wantPhase: v1alpha1.OperationFailed, wantReads: 5, wantRefreshes: 1},
		"no stale read":                   {versions: []*v1alpha1.Application{running, failed}, wantPhase: v1alpha1.OperationFailed, wantReads: 2},
		"the same state after a run":      {versions: []*v1alpha1.Application{running, previous}, wantPhase: v1alpha1.OperationSucceeded, wantReads: 2},
		"a first operation (none before)": {versions: []*v1alpha1.Application{{}, failed}, requested: &v1alpha1.Application{}, wantPhase: v1alpha1.OperationFailed, wantReads: 2},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			b := &reads{versions: tc.versions}
			req := requested
			if tc.requested != nil {
				req = tc.requested
			}
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			app, err := Waiter{Backend: b, Interval: time.Millisecond}.WaitOperation(ctx, "web", req)
			var opErr *OperationError
			if tc.wantPhase == v1alpha1.OperationSucceeded && err != nil || tc.wantPhase != v1alpha1.OperationSucceeded && !errors.As(err, &opErr) {
				t.Fatalf("err %v for phase %s", err, tc.wantPhase)
			}
			if app.Status.OperationState.Phase != tc.wantPhase || b.n != tc.wantReads || b.refreshes != tc.wantRefreshes {
				t.Errorf("ended at %s after %d reads and %d refreshes, want %s after %d and %d",
					app.Status.OperationState.Phase, b.n, b.refreshes, tc.wantPhase, tc.wantReads, tc.wantRefreshes)
			}
		})
	}
	// Only stale reads: the wait runs out of time instead of ending early.
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := (Waiter{Backend: &reads{versions: []*v1alpha1.Application{previous}}, Interval: time.Millisecond}).WaitOperation(ctx, "web", requested); !errors.Is(err, ErrTimeout) {
		t.Errorf("only stale reads: %v, want a timeout", err)
	}
}
