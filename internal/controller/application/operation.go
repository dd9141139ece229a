package application

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/skiffcd/skiff/api/v1alpha1"
	"github.com/skiffcd/skiff/internal/appops"
	"github.com/skiffcd/skiff/internal/clustercache"
	"github.com/skiffcd/skiff/internal/diff"
	"github.com/skiffcd/skiff/internal/reposerver"
	"github.com/skiffcd/skiff/internal/syncengine"
)

// reconcileOperation runs the operation requested in app.operation. The work
// queue never hands one key to two workers, so an operation never runs
// twice in parallel; after a restart an operation still Running is run again
// (server-side apply makes that safe) and finishes once, resuming from the
// hook results its interrupted run recorded: a hook that completed is not
// run again. A failed attempt waits for its retry's back-off.
func (r *Reconciler) reconcileOperation(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	if err := r.Cache.WaitForSync(ctx); err != nil {
		return ctrl.Result{}, err
	}
	if !r.clustersRead() {
		return ctrl.Result{RequeueAfter: registryReadWait}, nil
	}
	if !r.owns(req.Name) {
		return ctrl.Result{}, nil
	}
	// Lost while it ran: its metric series go with it, not back.
	defer r.forgetSeriesIfLost(req.NamespacedName)
	app := &v1alpha1.Application{}
	if err := r.Client.Get(ctx, req.NamespacedName, app); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if app.Operation == nil || app.DeletionTimestamp != nil {
		return ctrl.Result{}, nil
	}
	// The cache may still show an operation this worker has just finished:
	// when it is older than this worker's last write of the app, confirm on
	// the API server, one GET, before running anything.
	if r.APIReader != nil && r.ourWrites.CacheOlder(req.NamespacedName, app.ResourceVersion) {
		if err := r.APIReader.Get(ctx, req.NamespacedName, app); err != nil {
			return ctrl.Result{}, client.IgnoreNotFound(err)
		}
		if app.Operation == nil || app.DeletionTimestamp != nil {
			return ctrl.Result{}, nil
		}
	}
	// Comparisons wait for the result from now (compareDeferral).
	r.operationStarts.begin(req.NamespacedName, r.now())
	defer r.operationStarts.forget(req.NamespacedName)
	observeAppInfo(app) // operation="sync" until the result
	state := app.Status.OperationState
	var resumed *v1alpha1.SyncOperationResult
	switch step, wait := nextOperationStep(app, r.now()); step {
	case stepTerminate:
		return ctrl.Result{}, r.finishOperation(ctx, app, v1alpha1.OperationFailed, "Operation terminated", nil, nil)
	case stepWaitForRetry:
		return ctrl.Result{RequeueAfter: wait}, nil
	case stepRetry:
		// The retry runs afresh.
	case stepResume:
		if heldForApproval(app) {
			return ctrl.Result{RequeueAfter: confirmationPollInterval}, nil // no approval yet: nothing to run again
		}
		resumed = state.SyncResult // what an interrupted run recorded, if anything
	case stepBegin:
		orig := app.DeepCopy()
		app.Status.OperationState = &v1alpha1.OperationState{
			Operation: *app.Operation, Phase: v1alpha1.OperationRunning,
			Message: "Syncing", StartedAt: metav1.NewTime(r.now()),
		}
		if state != nil && isRunning(state.Phase) {
			app.Status.OperationState.RetryCount = state.RetryCount
		}
		if err := r.Client.Patch(ctx, app, client.MergeFrom(orig)); err != nil {
			return ctrl.Result{}, fmt.Errorf("recording the operation start: %w", err)
		}
		r.wrote(app)
		if r.Recorder != nil {
			r.Recorder.Eventf(app, nil, "Normal", eventReasonOperationStarted, "Sync", "Initiated sync to %s", targetRevision(app))
		}
	}

	runCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	r.running.Store(app.Name, cancel)
	defer r.running.Delete(app.Name)
	go r.watchTermination(runCtx, func() { cancel(nil) }, client.ObjectKeyFromObject(app))

	result, syncResult, err := r.sync(runCtx, app, resumed)
	if ctx.Err() != nil {
		return ctrl.Result{}, ctx.Err() // shutting down: the next start resumes it
	}
	if errors.Is(context.Cause(runCtx), errAppMoved) {
		return ctrl.Result{}, nil // another replica owns the app now and resumes the operation
	}
	if runCtx.Err() != nil {
		return ctrl.Result{}, r.finishOperation(ctx, app, v1alpha1.OperationFailed, "Operation terminated", syncResult, nil)
	}
	if err != nil {
		return r.retryOrFail(ctx, app, v1alpha1.OperationError, err.Error(), syncResult)
	}
	if result.Phase == v1alpha1.OperationRunning {
		// Held before a prune that waits for the app's deletion approval:
		// the operation stays Running with the engine's message; the
		// approval (an update of the app) resumes it.
		r.writeOperationProgress(ctx, app, syncResult, result.Message)
		return ctrl.Result{RequeueAfter: confirmationPollInterval}, nil
	}
	if result.Phase != v1alpha1.OperationSucceeded {
		return r.retryOrFail(ctx, app, result.Phase, result.Message, syncResult)
	}
	return ctrl.Result{}, r.finishOperation(ctx, app, v1alpha1.OperationSucceeded, result.Message, syncResult, &result)
}

func isRunning(p v1alpha1.OperationPhase) bool {
	return p == v1alpha1.OperationRunning || p == v1alpha1.OperationTerminating
}

// watchTermination cancels the running sync when a user sets the phase to
// Terminating (`skiff app terminate-op`).
func (r *Reconciler) watchTermination(ctx context.Context, cancel context.CancelFunc, key client.ObjectKey) {
	ticker := time.NewTicker(terminationPollInterval)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
		}
		app := &v1alpha1.Application{}
		if err := r.Client.Get(ctx, key, app); err != nil {
			continue
		}
		if s := app.Status.OperationState; s != nil && s.Phase == v1alpha1.OperationTerminating {
			cancel()
			return
		}
	}
}

// sync renders the operation's revision and runs the sync engine. resumed
// holds what an interrupted run of the operation recorded (nil for a new
// run): the sync renders the revisions it rendered and takes its hooks over.
func (r *Reconciler) sync(ctx context.Context, app *v1alpha1.Application, resumed *v1alpha1.SyncOperationResult) (syncengine.Result, *v1alpha1.SyncOperationResult, error) {
	op := app.Operation.Sync
	if op == nil {
		return syncengine.Result{}, nil, fmt.Errorf("only sync operations are supported")
	}
	proj, cluster, msg := r.validate(ctx, app)
	if msg != "" {
		return syncengine.Result{}, nil, fmt.Errorf("%s", msg)
	}
	if ok, reason := r.canSync(ctx, app, cluster); !ok {
		return syncengine.Result{}, nil, fmt.Errorf("%s", reason)
	}
	tgt, err := r.useCluster(app.Name, cluster)
	if err != nil {
		return syncengine.Result{}, nil, err
	}
	srcs, pins := operationSources(app, op)
	if resumed != nil {
		pins = resumedPins(resumed, pins)
	}
	resp, err := r.Repo.Manifests(ctx, reposerver.Request{
		AppName: app.Name, Project: app.ProjectName(), Sources: srcs, Revisions: pins, Namespace: app.Spec.Destination.Namespace,
		KubeVersion: tgt.caps.kubeVersion, APIVersions: tgt.caps.apiVersions,
	})
	if err != nil {
		return syncengine.Result{}, nil, fmt.Errorf("rendering the target state: %w", err)
	}
	syncResult := &v1alpha1.SyncOperationResult{}
	if len(app.Spec.Sources) > 0 {
		syncResult.Sources, syncResult.Revisions = srcs, resp.Revisions
	} else {
		syncResult.Source, syncResult.Revision = srcs[0], resp.Revisions[0]
	}
	desired := appops.DefaultNamespaces(resp.Manifests, app.Spec.Destination.Namespace, tgt.isNamespaced)
	// Excluded kinds and those skipped for resource.respectRBAC are neither
	// applied nor pruned; the comparison warns.
	desired, _ = withoutExcluded(desired, r.settings(), cluster.Server, tgt.cache.SkippedKind)
	if violations := projectViolations(proj, app, desired, cluster, r.ManagedNamespace); violations != "" {
		return syncengine.Result{}, syncResult, fmt.Errorf("%s", violations)
	}

	opts, err := syncengine.ParseOptions(append(policyOptions(app), op.SyncOptions...))
	if err != nil {
		return syncengine.Result{}, syncResult, err
	}
	opts.ApplyOutOfSyncOnly = applyOutOfSyncOnly(app, opts)
	var selected []clustercache.ResourceKey
	for _, res := range op.Resources {
		selected = append(selected, clustercache.ResourceKey{Group: res.Group, Kind: res.Kind, Namespace: res.Namespace, Name: res.Name})
	}
	allowEmpty := app.Spec.SyncPolicy != nil && app.Spec.SyncPolicy.Automated != nil && app.Spec.SyncPolicy.Automated.AllowEmpty
	plan, err := syncengine.NewPlan(syncengine.PlanInput{
		Desired: desired, Live: tgt.cache.AppObjects(app.Name), Options: opts,
		Prune: op.Prune, AllowEmpty: allowEmpty, Resources: selected,
	})
	if err != nil {
		return syncengine.Result{}, syncResult, err
	}
	var recorded []v1alpha1.ResourceResult
	if resumed != nil {
		recorded = resumed.Resources
	}
	settings := r.settings()
	ignore := ignoreDifferences(app, settings)
	known := settings.Resource.KnownTypeFields()
	result := tgt.engine.Run(withAppRequests(ctx, app, op.DryRun), syncengine.Request{
		App: app.Name, Tracking: r.tracking(), Namespace: app.Spec.Destination.Namespace, Plan: plan, Options: opts, DryRun: op.DryRun,
		NamespaceExists:   r.namespaceExists(tgt.cache, app.Spec.Destination.Namespace),
		IgnoreDifferences: ignore,
		IsModified: func(desired, live *unstructured.Unstructured) bool {
			modified, err := r.diffs.Modified(app.Name, clustercache.KeyOf(desired).String(), desired, live, diff.Options{IgnoreDifferences: ignore, Schemas: r.Schemas,
				KnownTypeFields: known})
			return err != nil || modified
		},
		Resumed:       recorded,
		PruneApproved: pruneApproved(app),
		Progress: func(results []v1alpha1.ResourceResult) {
			progress := *syncResult
			progress.Resources = results
			r.recordProgress(ctx, app, &progress)
		},
	})
	syncResult.Resources = result.Resources
	return result, syncResult, nil
}

// pruneApproved reports whether the app's deletion approval covers its
// running operation: given at or after the operation began.
func pruneApproved(app *v1alpha1.Application) bool {
	state := app.Status.OperationState
	return state != nil && app.DeletionApproved(state.StartedAt.Time)
}

// heldForApproval reports whether app's running operation was left waiting
// for a pruning confirmation that has not come: its status message is the
// engine's, the only record of the wait.
func heldForApproval(app *v1alpha1.Application) bool {
	state := app.Status.OperationState
	return state != nil && state.Phase == v1alpha1.OperationRunning && state.FinishedAt == nil &&
		strings.HasPrefix(state.Message, syncengine.MessagePruneConfirmation) && !pruneApproved(app)
}

// applyOutOfSyncOnly reports whether a sync leaves alone the objects whose
// comparison is Synced (no dry run, no apply): when the ApplyOutOfSyncOnly
// option says so, as in Argo CD, and in every automated sync of an app
// without ignoreDifferences. An automated sync follows a comparison that
// found the app OutOfSync; applying an object the same diff finds Synced
// changes nothing, at two API calls each. With ignoreDifferences an object
// can be Synced yet differ in an ignored field, which Argo CD's sync
// overwrites unless RespectIgnoreDifferences is set, so those apps apply
// everything; so do manual syncs, unless the option is set.
func applyOutOfSyncOnly(app *v1alpha1.Application, opts syncengine.Options) bool {
	if opts.ApplyOutOfSyncOnly {
		return true
	}
	automated := app.Operation != nil && app.Operation.InitiatedBy.Automated
	return automated && (len(app.Spec.IgnoreDifferences) == 0 || opts.RespectIgnoreDifferences)
}

// namespaceExists reports whether the cluster cache live has seen namespace ns.
func (r *Reconciler) namespaceExists(live *clustercache.Cache, ns string) bool {
	if ns == "" || live == nil {
		return false
	}
	if ns == r.ManagedNamespace {
		// Skiff runs there; a namespaced install cannot read Namespaces.
		return true
	}
	_, ok := live.Get(clustercache.ResourceKey{Kind: "Namespace", Name: ns})
	return ok
}

// operationSources are the sources an operation renders, as written (the
// app's, or the operation's own for a rollback), and the revision each is
// pinned to ("" for none), as Argo CD's sync renders them: the history and
// syncResult keep the source as written beside the resolved revision.
func operationSources(app *v1alpha1.Application, op *v1alpha1.SyncOperation) ([]v1alpha1.ApplicationSource, []string) {
	switch {
	case op.Source != nil:
		return []v1alpha1.ApplicationSource{*op.Source}, []string{op.Revision}
	case len(op.Sources) > 0:
		return op.Sources, op.Revisions
	case len(app.Spec.Sources) > 0:
		return app.Spec.Sources, op.Revisions
	default:
		return app.Spec.GetSources(), []string{op.Revision}
	}
}

func policyOptions(app *v1alpha1.Application) []string {
	if app.Spec.SyncPolicy == nil {
		return nil
	}
	return app.Spec.SyncPolicy.SyncOptions
}

func targetRevision(app *v1alpha1.Application) string {
	if op := app.Operation.Sync; op != nil {
		if op.Revision != "" {
			return op.Revision
		}
		if len(op.Revisions) > 0 {
			return strings.Join(op.Revisions, ",")
		}
	}
	if app.Spec.Source != nil {
		return app.Spec.Source.TargetRevision
	}
	return "HEAD"
}

// resumedPins pins each source to the revision the interrupted run of an
// operation rendered, as Argo CD does: the hook results it recorded belong
// to that render, whatever was committed since.
func resumedPins(recorded *v1alpha1.SyncOperationResult, pins []string) []string {
	switch {
	case len(recorded.Revisions) > 0 && len(recorded.Revisions) == len(pins):
		return recorded.Revisions
	case len(pins) == 1 && recorded.Revision != "":
		return []string{recorded.Revision}
	}
	return pins
}

// recordProgress writes an operation's results so far: a run that resumes
// the operation after a restart takes its hooks over from them
// (syncengine.Request.Resumed). A failed write costs only that; the
// operation goes on and its outcome is written when it ends.
func (r *Reconciler) recordProgress(ctx context.Context, app *v1alpha1.Application, result *v1alpha1.SyncOperationResult) {
	r.writeOperationProgress(ctx, app, result, progressMessage(result.Resources))
}

// writeOperationProgress writes a running operation's results so far and
// message; a failed write costs only that.
func (r *Reconciler) writeOperationProgress(ctx context.Context, app *v1alpha1.Application, result *v1alpha1.SyncOperationResult, message string) {
	orig := app.DeepCopy()
	state := app.Status.OperationState
	state.SyncResult, state.FinishedAt, state.Message = result, nil, message
	if err := r.Client.Patch(ctx, app, client.MergeFrom(orig)); err != nil {
		*app = *orig
		return
	}
	r.wrote(app)
}

// progressMessage is a running operation's message, in Argo CD's words.
func progressMessage(results []v1alpha1.ResourceResult) string {
	var running []string
	for _, res := range results {
		if res.HookType != "" && res.HookPhase == v1alpha1.OperationRunning {
			running = append(running, res.Group+"/"+res.Kind+"/"+res.Name)
		}
	}
	switch len(running) {
	case 0:
		return "Syncing"
	case 1:
		return "waiting for completion of hook " + running[0]
	}
	return fmt.Sprintf("waiting for completion of hook %s and %d more hooks", running[0], len(running)-1)
}

// retryOrFail retries per the retry strategy (retryAfterFailure) or
// records the failure. A retry is recorded with the attempt's end
// (finishedAt) while the phase stays Running: retryDue counts its back-off
// from there, whatever wakes the operation worker before (a write of the
// app, a restart).
func (r *Reconciler) retryOrFail(ctx context.Context, app *v1alpha1.Application, phase v1alpha1.OperationPhase, message string, result *v1alpha1.SyncOperationResult) (ctrl.Result, error) {
	now := r.now()
	due, retry := retryAfterFailure(app, now)
	if !retry {
		return ctrl.Result{}, r.finishOperation(ctx, app, phase, message, result, nil)
	}
	orig := app.DeepCopy()
	state := app.Status.OperationState // recorded when the operation started
	state.RetryCount, state.FinishedAt, state.SyncResult = state.RetryCount+1, &metav1.Time{Time: now}, result
	state.Message = fmt.Sprintf("%s. Retrying attempt #%d at %s.", message, state.RetryCount, due.Format(time.Kitchen))
	if err := r.Client.Patch(ctx, app, client.MergeFrom(orig)); err != nil {
		return ctrl.Result{}, fmt.Errorf("recording the retry: %w", err)
	}
	r.wrote(app)
	return ctrl.Result{RequeueAfter: due.Sub(now)}, nil
}

// finishOperation records the outcome, appends history on success and
// clears the operation, in one write. The objects the sync updated go into
// the cluster cache first, for every reader before their watch events.
// After a successful sync (synced carries the engine's result) that write
// also holds the comparison with the objects as the sync wrote them (the
// created ones, which the cache records only from their watch events,
// included), so no second write follows at once to say Synced. What the
// sync changes after that (created objects appearing, a rollout's status)
// reaches the app through the cache's watch events, as any live change does;
// the comparison is remembered, so a poll finding nothing moved reuses it.
// A sync that pruned leaves the comparison to those events: deleted objects
// linger in the cache until their watch event.
func (r *Reconciler) finishOperation(ctx context.Context, app *v1alpha1.Application, phase v1alpha1.OperationPhase, message string, result *v1alpha1.SyncOperationResult, synced *syncengine.Result) error {
	if synced != nil {
		// The sync has just written there: the cluster answered.
		if tgt, _ := r.targetOf(app.Name); tgt.cache != nil {
			for _, obj := range synced.Applied {
				tgt.cache.Record(obj)
			}
		}
	}
	orig := app.DeepCopy()
	prevHealth := app.Status.Health.Status
	now := metav1.NewTime(r.now())
	state := app.Status.OperationState
	if state == nil {
		state = &v1alpha1.OperationState{Operation: *app.Operation, StartedAt: now}
	}
	state.Phase, state.Message, state.FinishedAt = phase, message, &now
	if result != nil {
		state.SyncResult = result
	}
	app.Status.OperationState = state
	if phase == v1alpha1.OperationSucceeded {
		// Whatever held auto-sync back (a failed attempt) is over.
		conds := newConditions(app.Status.Conditions, now)
		conds.clear(v1alpha1.ApplicationConditionSyncError)
		app.Status.Conditions = conds.list()
	}
	dryRun := app.Operation.Sync != nil && app.Operation.Sync.DryRun
	if phase == v1alpha1.OperationSucceeded && result != nil && app.Operation.Sync != nil && !dryRun {
		app.Status.History = appendHistory(app, result, state.StartedAt, now)
	}
	app.Operation = nil
	compared := phase == v1alpha1.OperationSucceeded && synced != nil && !dryRun && !synced.Pruned
	var cmp comparison
	if compared {
		cmp = r.compare(ctx, app, false, 0, synced.Applied)
		r.compared.beginWrite(app.Name)
	}
	if err := r.Client.Patch(ctx, app, client.MergeFrom(orig)); err != nil {
		r.compared.forget(app.Name)
		return fmt.Errorf("recording the operation result: %w", err)
	}
	r.wrote(app)
	if compared {
		// The next comparison (a poll, the watch event of an object the
		// sync updated) finds the same unless something moved since.
		r.rememberComparison(app, cmp)
		r.recordHealthChange(app, prevHealth)
	}
	if r.Recorder != nil {
		kind := "Normal"
		if phase != v1alpha1.OperationSucceeded {
			kind = "Warning"
		}
		r.Recorder.Eventf(app, nil, kind, eventReasonOperationCompleted, "Sync", "Sync operation to %s %s: %s", revisionOf(result), strings.ToLower(string(phase)), message)
	}
	observeSync(app, phase, dryRun, state.FinishedAt.Sub(state.StartedAt.Time))
	return nil
}

// wrote remembers the resourceVersion of the operation worker's latest
// write of app (the patch response sets it).
func (r *Reconciler) wrote(app *v1alpha1.Application) {
	r.ourWrites.Wrote(client.ObjectKeyFromObject(app), app.ResourceVersion)
}

func revisionOf(r *v1alpha1.SyncOperationResult) string {
	if r == nil {
		return ""
	}
	if len(r.Revisions) > 0 {
		return strings.Join(r.Revisions, ",")
	}
	return r.Revision
}

func appendHistory(app *v1alpha1.Application, result *v1alpha1.SyncOperationResult, started, finished metav1.Time) []v1alpha1.RevisionHistory {
	history := app.Status.History
	var id int64
	if n := len(history); n > 0 {
		id = history[n-1].ID + 1
	}
	history = append(history, v1alpha1.RevisionHistory{
		ID: id, Revision: result.Revision, Revisions: result.Revisions,
		Source: result.Source, Sources: result.Sources,
		DeployedAt: finished, DeployStartedAt: &started,
		InitiatedBy: app.Operation.InitiatedBy,
	})
	limit := int64(defaultRevisionHistoryLimit)
	if app.Spec.RevisionHistoryLimit != nil {
		limit = *app.Spec.RevisionHistoryLimit
	}
	if int64(len(history)) > limit {
		history = history[int64(len(history))-limit:]
	}
	return history
}

func equalJSON(a, b any) bool {
	ja, err1 := json.Marshal(a)
	jb, err2 := json.Marshal(b)
	if err1 != nil || err2 != nil {
		return reflect.DeepEqual(a, b)
	}
	return string(ja) == string(jb)
}
