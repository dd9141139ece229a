package application

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/skiffcd/skiff/api/v1alpha1"
)

func TestRetryDue(t *testing.T) {
	failed := time.Date(2026, 5, 4, 10, 0, 0, 0, time.UTC)
	factor3 := int64(3)
	tests := map[string]struct {
		operation v1alpha1.RetryStrategy
		policy    *v1alpha1.RetryStrategy
		// retries is the operation's retryCount, counting the one due.
		retries int64
		want    time.Duration
	}{
		"the first retry waits the default 5 s": {
			operation: v1alpha1.RetryStrategy{Limit: 5}, retries: 1, want: 5 * time.Second,
		},
		"the third waits twice doubled": {
			operation: v1alpha1.RetryStrategy{Limit: 5}, retries: 3, want: 20 * time.Second,
		},
		"the wait stops growing at maxDuration": {
			operation: v1alpha1.RetryStrategy{Limit: -1, Backoff: &v1alpha1.Backoff{Duration: "10s", Factor: &factor3, MaxDuration: "1m"}},
			retries:   4, want: time.Minute,
		},
		"syncPolicy.retry's back-off counts for an operation without a strategy": {
			policy:  &v1alpha1.RetryStrategy{Limit: 2, Backoff: &v1alpha1.Backoff{Duration: "1s"}},
			retries: 2, want: 2 * time.Second,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			app := &v1alpha1.Application{Operation: &v1alpha1.Operation{Retry: tc.operation}}
			app.Spec.SyncPolicy = &v1alpha1.SyncPolicy{Retry: tc.policy}
			app.Status.OperationState = &v1alpha1.OperationState{
				Phase: v1alpha1.OperationRunning, RetryCount: tc.retries, FinishedAt: &metav1.Time{Time: failed},
			}
			if got := retryDue(app).Sub(failed); got != tc.want {
				t.Errorf("retry due %s after the failed attempt, want %s", got, tc.want)
			}
		})
	}
}

func TestNextOperationStep(t *testing.T) {
	now := time.Date(2026, 5, 4, 10, 0, 0, 0, time.UTC)
	op := v1alpha1.Operation{Sync: &v1alpha1.SyncOperation{Revision: "new"}, Retry: v1alpha1.RetryStrategy{Limit: 5}}
	other := v1alpha1.Operation{Sync: &v1alpha1.SyncOperation{Revision: "old"}}
	state := func(op v1alpha1.Operation, phase v1alpha1.OperationPhase, retries int64, failedAgo time.Duration) *v1alpha1.OperationState {
		s := &v1alpha1.OperationState{Operation: op, Phase: phase, RetryCount: retries}
		if failedAgo > 0 {
			s.FinishedAt = &metav1.Time{Time: now.Add(-failedAgo)}
		}
		return s
	}
	tests := map[string]struct {
		state    *v1alpha1.OperationState
		want     operationStep
		wantWait time.Duration
	}{
		"an operation no state records yet is begun":                 {want: stepBegin},
		"an operation after a finished one is begun":                 {state: state(op, v1alpha1.OperationSucceeded, 0, time.Hour), want: stepBegin},
		"an operation that replaced the running one is begun":        {state: state(other, v1alpha1.OperationRunning, 0, 0), want: stepBegin},
		"an operation a user set Terminating ends without a run":     {state: state(op, v1alpha1.OperationTerminating, 0, 0), want: stepTerminate},
		"a terminating operation ends though another was requested":  {state: state(other, v1alpha1.OperationTerminating, 0, 0), want: stepTerminate},
		"an operation running when its worker stopped is resumed":    {state: state(op, v1alpha1.OperationRunning, 0, 0), want: stepResume},
		"a failed attempt waits for the rest of its 5 s back-off":    {state: state(op, v1alpha1.OperationRunning, 1, 2*time.Second), want: stepWaitForRetry, wantWait: 3 * time.Second},
		"a second failed attempt waits twice as long":                {state: state(op, v1alpha1.OperationRunning, 2, 2*time.Second), want: stepWaitForRetry, wantWait: 8 * time.Second},
		"a failed attempt whose back-off is over is retried afresh":  {state: state(op, v1alpha1.OperationRunning, 1, 5*time.Second), want: stepRetry},
		"a failed attempt long past its back-off is retried at once": {state: state(op, v1alpha1.OperationRunning, 1, time.Hour), want: stepRetry},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			app := &v1alpha1.Application{Operation: op.DeepCopy()}
			app.Status.OperationState = tc.state
			step, wait := nextOperationStep(app, now)
			if step != tc.want || wait != tc.wantWait {
				t.Errorf("step %d waiting %s, want %d waiting %s", step, wait, tc.want, tc.wantWait)
			}
		})
	}
}

func TestRetryAfterFailure(t *testing.T) {
	now := time.Date(2026, 5, 4, 10, 0, 0, 0, time.UTC)
	tests := map[string]struct {
		operation v1alpha1.RetryStrategy
		policy    *v1alpha1.RetryStrategy
		// retries is the operation's retryCount before this failure.
		retries   int64
		wantRetry bool
		wantIn    time.Duration
	}{
		"a first failure is retried after the default 5 s": {
			operation: v1alpha1.RetryStrategy{Limit: 5}, wantRetry: true, wantIn: 5 * time.Second,
		},
		"a third failure is retried after twice doubled": {
			operation: v1alpha1.RetryStrategy{Limit: 5}, retries: 2, wantRetry: true, wantIn: 20 * time.Second,
		},
		"the last retry the limit allows is made": {
			operation: v1alpha1.RetryStrategy{Limit: 5}, retries: 4, wantRetry: true, wantIn: 80 * time.Second,
		},
		"a failure with the retries used up is final": {
			operation: v1alpha1.RetryStrategy{Limit: 5}, retries: 5,
		},
		"an operation without a retry strategy fails at once": {},
		"a negative limit retries for ever, the back-off capped at 3 minutes": {
			operation: v1alpha1.RetryStrategy{Limit: -1}, retries: 100, wantRetry: true, wantIn: 3 * time.Minute,
		},
		"syncPolicy.retry counts for an operation without a strategy": {
			policy: &v1alpha1.RetryStrategy{Limit: 2, Backoff: &v1alpha1.Backoff{Duration: "1s"}}, retries: 1, wantRetry: true, wantIn: 2 * time.Second,
		},
		"syncPolicy.retry's limit ends the retries too": {
			policy: &v1alpha1.RetryStrategy{Limit: 2}, retries: 2,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			app := &v1alpha1.Application{Operation: &v1alpha1.Operation{Retry: tc.operation}}
			app.Spec.SyncPolicy = &v1alpha1.SyncPolicy{Retry: tc.policy}
			app.Status.OperationState = &v1alpha1.OperationState{Phase: v1alpha1.OperationRunning, RetryCount: tc.retries}
			due, retry := retryAfterFailure(app, now)
			if retry != tc.wantRetry || retry && due.Sub(now) != tc.wantIn {
				t.Errorf("retry %v in %s, want %v in %s", retry, due.Sub(now), tc.wantRetry, tc.wantIn)
			}
		})
	}
}

func TestSelfHealBackoff(t *testing.T) {
	tests := map[string]struct {
		attempts int64
		want     time.Duration
	}{
		"the first self-heal waits 5 s":           {attempts: 0, want: 5 * time.Second},
		"each self-heal doubles the wait":         {attempts: 3, want: 40 * time.Second},
		"the wait stops growing at three minutes": {attempts: 10, want: 3 * time.Minute},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := selfHealBackoff(tc.attempts); got != tc.want {
				t.Errorf("selfHealBackoff(%d) = %s, want %s", tc.attempts, got, tc.want)
			}
		})
	}
}

// A self-heal that fails (a ResourceQuota refuses to re-create a deleted
// ConfigMap) is retried after its back-off, as every automated sync is
// (five times unless syncPolicy.retry says otherwise, as in Argo CD), and
// heals the app once the cause is gone, without anyone syncing. It used to
// fail once and leave the app OutOfSync for good.
func TestAFailedSelfHealIsRetriedAfterItsBackOff(t *testing.T) {
	ctx := context.Background()
	c, key, dest, _ := autoSyncedApp(t, "heal-retry", &v1alpha1.SyncPolicyAutomated{Prune: true, SelfHeal: true})
	quota := &corev1.ResourceQuota{
		ObjectMeta: metav1.ObjectMeta{Name: "no-more-configmaps", Namespace: dest},
		Spec:       corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{"count/configmaps": resource.MustParse("0")}},
	}
	if err := c.Create(ctx, quota); err != nil {
		t.Fatal(err)
	}
	if err := c.Delete(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "b", Namespace: dest}}); err != nil {
		t.Fatal(err)
	}

	app := waitApp(t, c, key, "the self-heal to fail and wait for its retry", func(a *v1alpha1.Application) bool {
		s := a.Status.OperationState
		return s != nil && s.RetryCount == 1 && s.Phase == v1alpha1.OperationRunning && s.FinishedAt != nil
	})
	if s := app.Status.OperationState; autoHealAttempts(s.Operation.Sync) == 0 || !strings.Contains(s.Message, "Retrying attempt #1") {
		t.Fatalf("operation %+v, want a self-heal waiting for its first retry", s)
	}
	// When the retry runs is TestNextOperationStep's; here the healing
	// retry shows it waited for the back-off of the failed attempt.
	failedAt := app.Status.OperationState.FinishedAt.Time

	if err := c.Delete(ctx, quota); err != nil {
		t.Fatal(err)
	}
	app = waitApp(t, c, key, "the retry to heal the app", func(a *v1alpha1.Application) bool {
		s := a.Status.OperationState
		return a.Status.Sync.Status == v1alpha1.SyncStatusCodeSynced && s != nil && s.Phase == v1alpha1.OperationSucceeded
	})
	if s := app.Status.OperationState; s.RetryCount < 1 || autoHealAttempts(s.Operation.Sync) != 1 {
		t.Errorf("healed by retry %d of self-heal %d, want a retry of the first self-heal", s.RetryCount, autoHealAttempts(s.Operation.Sync))
	}
	// Times are recorded to the second, so the 5 s back-off shows whole.
	if healedAt := app.Status.OperationState.FinishedAt.Time; healedAt.Sub(failedAt) < 5*time.Second {
		t.Errorf("the retry ended %s after the failed attempt, within its 5 s back-off", healedAt.Sub(failedAt))
	}
	if !configMapExists(t, c, dest, "b") {
		t.Error("the deleted ConfigMap was not re-created")
	}
	if hasCondition(app, v1alpha1.ApplicationConditionSyncError) {
		t.Errorf("a SyncError outlived the healing: %s", conditionMessage(app, v1alpha1.ApplicationConditionSyncError))
	}
}
