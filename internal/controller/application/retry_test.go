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
	time.Sleep(2 * time.Second) // within the 5 s back-off: no retry yet
	if err := c.Get(ctx, key, app); err != nil {
		t.Fatal(err)
	}
	if s := app.Status.OperationState; s.RetryCount != 1 || s.Phase != v1alpha1.OperationRunning {
		t.Fatalf("retried before its back-off: retry count %d, phase %s: %s", s.RetryCount, s.Phase, s.Message)
	}

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
	if !configMapExists(t, c, dest, "b") {
		t.Error("the deleted ConfigMap was not re-created")
	}
	if hasCondition(app, v1alpha1.ApplicationConditionSyncError) {
		t.Errorf("a SyncError outlived the healing: %s", conditionMessage(app, v1alpha1.ApplicationConditionSyncError))
	}
}
