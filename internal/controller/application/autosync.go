package application

import (
	"fmt"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/skiffcd/skiff/api/v1alpha1"
)

// defaultAutoSyncRetryLimit is how many times a failed automated sync is
// retried when syncPolicy.retry does not say: Argo CD's default.
const defaultAutoSyncRetryLimit = 5

// autoSyncDecision is what auto-sync makes of one comparison.
type autoSyncDecision struct {
	// operation is the operation to request; nil for none.
	operation *v1alpha1.Operation
	// syncError says why auto-sync holds back where only the user can
	// help: the SyncError condition's message; empty clears the condition.
	syncError string
	// healIn is how long a self-heal still waits for its back-off.
	healIn time.Duration
}

// decideAutoSync decides, at now, whether an app whose comparison was cmp
// syncs by itself. An automated app out of sync is synced once per new
// revision; a failed sync is retried per syncPolicy.retry (five times by
// default, as in Argo CD) and then left until a new commit or a manual
// sync, with a SyncError saying so. Drift is synced only with selfHeal,
// after a back-off that grows with each self-heal. An empty render is not
// synced with prune unless allowEmpty: it would delete everything, and an
// empty render is more often a mistake than an intent.
func decideAutoSync(app *v1alpha1.Application, cmp comparison, now time.Time) autoSyncDecision {
	if !app.IsAutomated() || cmp.failed || app.Operation != nil || app.Status.Sync.Status != v1alpha1.SyncStatusCodeOutOfSync ||
		hasCondition(app, v1alpha1.ApplicationConditionInvalidSpecError) {
		return autoSyncDecision{}
	}
	policy := app.Spec.SyncPolicy
	revision := strings.Join(cmp.revisions, ",")
	if len(cmp.desired) == 0 && !policy.Automated.AllowEmpty {
		if !policy.Automated.Prune {
			return autoSyncDecision{} // such a sync would change nothing
		}
		return autoSyncDecision{syncError: fmt.Sprintf(
			"Skipping sync attempt to %s: the render returned no resources, and auto-sync refuses to prune all %d live ones (set syncPolicy.automated.allowEmpty to allow it)",
			revision, requiringPruning(app.Status.Resources))}
	}
	op := &v1alpha1.SyncOperation{
		Revision: cmp.revisions[0], Prune: policy.Automated.Prune, SyncOptions: policy.SyncOptions,
	}
	if len(app.Spec.Sources) > 0 {
		op.Revision, op.Revisions = "", cmp.revisions
	}
	if last := app.Status.OperationState; last != nil && last.SyncResult != nil && lastRevision(last) == revision {
		if last.Phase != v1alpha1.OperationSucceeded {
			return autoSyncDecision{syncError: fmt.Sprintf("Failed last sync attempt to %s: %s", revision, last.Message)}
		}
		if !policy.Automated.SelfHeal {
			return autoSyncDecision{}
		}
		attempts := autoHealAttempts(last.Operation.Sync)
		if last.FinishedAt != nil {
			if wait := last.FinishedAt.Add(selfHealBackoff(attempts)).Sub(now); wait > 0 {
				return autoSyncDecision{healIn: wait}
			}
		}
		op.AutoHealAttemptsCount = attempts + 1
	}
	retry := v1alpha1.RetryStrategy{Limit: defaultAutoSyncRetryLimit}
	if policy.Retry != nil {
		retry = *policy.Retry
	}
	return autoSyncDecision{operation: &v1alpha1.Operation{
		Sync: op, InitiatedBy: v1alpha1.OperationInitiator{Automated: true}, Retry: retry,
	}}
}

// autoSync applies decideAutoSync to app: it requests the operation and
// sets or clears the SyncError condition. It returns how long a self-heal
// waits for its back-off.
func (r *Reconciler) autoSync(app *v1alpha1.Application, cmp comparison) time.Duration {
	now := r.now()
	decision := decideAutoSync(app, cmp, now)
	conds := newConditions(app.Status.Conditions, metav1.NewTime(now))
	conds.set(v1alpha1.ApplicationConditionSyncError, decision.syncError)
	app.Status.Conditions = conds.list()
	if decision.operation == nil {
		return decision.healIn
	}
	app.Operation = decision.operation
	// The operation starts in the write that requests it: the operation
	// worker finds it Running with the same operation and runs it without
	// a write of its own (as it resumes one after a restart).
	app.Status.OperationState = &v1alpha1.OperationState{
		Operation: *app.Operation, Phase: v1alpha1.OperationRunning,
		Message: "Syncing", StartedAt: metav1.NewTime(now),
	}
	return 0
}

func autoHealAttempts(op *v1alpha1.SyncOperation) int64 {
	if op == nil {
		return 0
	}
	return op.AutoHealAttemptsCount
}

func lastRevision(s *v1alpha1.OperationState) string {
	if len(s.SyncResult.Revisions) > 0 {
		return strings.Join(s.SyncResult.Revisions, ",")
	}
	return s.SyncResult.Revision
}

// selfHealBackoff is how long after the last self-heal the next may run:
// it doubles with each attempt, as Argo CD's does.
func selfHealBackoff(attempts int64) time.Duration {
	return exponentialBackoff(defaultSelfHealBackoff, 2, maxSelfHealBackoff, attempts)
}

// requiringPruning counts the resources a sync with prune would delete.
func requiringPruning(resources []v1alpha1.ResourceStatus) int {
	n := 0
	for _, rs := range resources {
		if rs.RequiresPruning {
			n++
		}
	}
	return n
}
