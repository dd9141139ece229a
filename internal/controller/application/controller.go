// Package application is the Application controller: it keeps every
// argoproj.io/v1alpha1 Application in line with git, writing status where
// Argo CD writes it. Two controllers share the kind: one compares (render,
// diff, health, status, auto-sync decisions), one runs operations (syncs),
// each with its own work queue so a slow sync never delays the status of
// other applications.
package application

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/skiffcd/skiff/internal/shard"

	"github.com/skiffcd/skiff/internal/argocdcm"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/tools/events"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/skiffcd/skiff/api/v1alpha1"
	"github.com/skiffcd/skiff/internal/appops"
	"github.com/skiffcd/skiff/internal/clustercache"
	"github.com/skiffcd/skiff/internal/clusters"
	"github.com/skiffcd/skiff/internal/diff"
	"github.com/skiffcd/skiff/internal/ownwrites"
	"github.com/skiffcd/skiff/internal/reposerver"
	"github.com/skiffcd/skiff/internal/syncengine"
	"github.com/skiffcd/skiff/internal/syncmap"
)

const (
	defaultRefreshPeriod   = 180 * time.Second
	defaultSelfHealBackoff = 5 * time.Second
	maxSelfHealBackoff     = 3 * time.Minute
	finalizerPollInterval  = 2 * time.Second
	// retrackTimeout bounds the reads of a tracking change.
	retrackTimeout = 2 * time.Minute
	// confirmationPollInterval is how often an operation held for a
	// deletion approval looks again without being woken by the app's update.
	confirmationPollInterval    = 10 * time.Second
	defaultRevisionHistoryLimit = 10
	terminationPollInterval     = time.Second
	// Event-driven comparisons wait for an operation in its first
	// operationCompareGrace, looking again every operationCompareDeferral.
	operationCompareGrace    = 5 * time.Second
	operationCompareDeferral = time.Second
	// resultWriteWait is how long a comparison waits for an operation's
	// result write under way (one PATCH).
	resultWriteWait = 50 * time.Millisecond
	// liveChangeCoalescing is how long a comparison a live change asks for
	// waits: the changes within it (a Deployment's status moves three or
	// four times while its pods start) cost one comparison.
	liveChangeCoalescing          = 300 * time.Millisecond
	eventReasonOperationStarted   = "OperationStarted"
	eventReasonOperationCompleted = "OperationCompleted"
	eventReasonHealthChanged      = "ResourceUpdated"
)

// Reconciler holds what both Application controllers need.
type Reconciler struct {
	// Client reads Applications (cached) and writes them.
	Client client.Client
	// APIReader reads an Application uncached before its operation runs
	// when the cached copy is older than the operation worker's last write
	// of it (it would run a finished operation again). Nil means Client.
	APIReader client.Reader
	// Namespace holds the Applications and AppProjects Skiff serves.
	Namespace string
	// ManagedNamespace, when set (skiff server --namespaced), is the only
	// namespace apps may deploy to: an app with another destination or a
	// cluster-scoped object gets an InvalidSpecError and is not synced.
	ManagedNamespace string
	// Clusters resolves destinations; nil means the in-cluster entry only.
	Clusters clusters.Registry
	// Settings is the live argocd-cm; nil means its defaults.
	Settings *argocdcm.Source
	// Connect builds the watch cache and sync engine of a registered
	// cluster; nil leaves apps deploying to one with a ComparisonError.
	Connect  Connector
	Repo     *reposerver.Server
	Cache    *clustercache.Cache
	Engine   *syncengine.Engine
	Recorder events.EventRecorder
	// Schemas gives custom resources' defaults to comparisons; nil means
	// those of the CRDs Skiff ships only.
	Schemas diff.Schemas
	// RefreshPeriod is how often each app is compared when argocd-cm's
	// timeout.reconciliation is unset; default 180 s, polls spread over
	// its last 10 %.
	RefreshPeriod time.Duration
	// CompareWorkers and OperationWorkers size the two work queues.
	CompareWorkers, OperationWorkers int
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Shards tells which apps this replica acts on when replicas share
	// the work (skiff server --leader-elect); nil: every app.
	Shards Shards

	kubeVersion string
	apiVersions []string
	polls       pollSchedule
	// hardRefreshes holds when each app's comparison last rendered past
	// the caches on timeout.hard.reconciliation's account.
	hardRefreshes hardRefreshSchedule
	// diffs remembers the last answers of the diff for each app's objects:
	// most pairs compared are the same as the time before.
	diffs diff.Memo
	// compared holds what each app's last reusable comparison read.
	compared lastComparisons
	// compareNow queues comparisons at once: refreshes, moved revisions,
	// health changes of live objects.
	compareNow comparisonRequests
	// compareCoalesced queues the comparisons the cluster cache's other
	// events ask for, liveChangeCoalescing later.
	compareCoalesced comparisonRequests
	// ourWrites holds the operation worker's latest write of each app.
	ourWrites ownwrites.Versions[client.ObjectKey]
	// operationStarts holds when the operations this process requested or
	// runs were begun.
	operationStarts operationStarts
	// refreshes holds the apps whose refresh, asked in process
	// (RefreshApps), no comparison has taken yet, with when it was asked.
	refreshMu sync.Mutex
	refreshes map[string]time.Time
	// remotes are the registered clusters apps deploy to.
	remotes remoteSet
	// operateNow queues an operation check of apps this replica takes over.
	operateNow comparisonRequests
	// retrackMu serialises settingsChanged's passes over the caches.
	retrackMu sync.Mutex
	// running holds the cancel of each operation under way, by app.
	running syncmap.Map[string, context.CancelCauseFunc]
	// comparing holds the cancel of each comparison under way, by app.
	comparing syncmap.Map[string, context.CancelCauseFunc]
}

func (r *Reconciler) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}

// SetupWithManager registers both controllers and feeds live changes of
// managed objects into the comparison queue.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	if r.RefreshPeriod == 0 {
		r.RefreshPeriod = defaultRefreshPeriod
	}
	if r.CompareWorkers == 0 {
		r.CompareWorkers = 10
	}
	if r.OperationWorkers == 0 {
		r.OperationWorkers = 10
	}
	if err := r.loadCapabilities(mgr); err != nil {
		return err
	}
	r.compareNow = make(comparisonRequests, 1024)
	r.compareCoalesced = make(comparisonRequests, 1024)
	r.operateNow = make(comparisonRequests, 1024)
	var onEveryReplica *bool
	if r.Shards != nil {
		r.Shards.Subscribe(r.shardsMoved)
		onEveryReplica = ptr.To(false) // each replica acts on its own apps
	}
	r.Cache.Subscribe(r.liveChange)
	r.followSettings()
	r.Repo.OnRevisionMove(r.compareAppsOnMove)
	if r.Clusters != nil {
		r.Clusters.Subscribe(r.clustersChanged)
	}
	// The registered clusters in use stop with the manager.
	stopClusters := shard.Runnable{OnEveryReplica: r.Shards != nil, Run: func(ctx context.Context) error {
		<-ctx.Done()
		r.stopClusters()
		return nil
	}}
	if err := mgr.Add(stopClusters); err != nil {
		return err
	}

	// Only the apps this replica owns: another replica's never enter its
	// queues (shardsMoved queues those it gains).
	inNamespace := predicate.NewPredicateFuncs(func(o client.Object) bool {
		return o.GetNamespace() == r.Namespace && r.owns(o.GetName())
	})
	err := ctrl.NewControllerManagedBy(mgr).
		Named("application-compare").
		For(&v1alpha1.Application{}, builder.WithPredicates(inNamespace, specChanged{})).
		WatchesRawSource(source.Channel(r.compareNow, &handler.TypedEnqueueRequestForObject[*v1alpha1.Application]{})).
		WatchesRawSource(source.Channel(r.compareCoalesced, enqueueAfter(liveChangeCoalescing))).
		WithOptions(controller.Options{MaxConcurrentReconciles: r.CompareWorkers, NeedLeaderElection: onEveryReplica}).
		Complete(reconcile(r.reconcileCompare))
	if err != nil {
		return fmt.Errorf("setting up the comparison controller: %w", err)
	}
	err = ctrl.NewControllerManagedBy(mgr).
		Named("application-operation").
		For(&v1alpha1.Application{}, builder.WithPredicates(inNamespace, operationRequested{})).
		WatchesRawSource(source.Channel(r.operateNow, &handler.TypedEnqueueRequestForObject[*v1alpha1.Application]{})).
		WithOptions(controller.Options{MaxConcurrentReconciles: r.OperationWorkers, NeedLeaderElection: onEveryReplica}).
		Complete(reconcile(r.reconcileOperation))
	if err != nil {
		return fmt.Errorf("setting up the operation controller: %w", err)
	}
	return nil
}

// tracking is how the live argocd-cm ties objects to Applications.
func (r *Reconciler) tracking() clustercache.Tracking {
	if r.Settings == nil {
		return clustercache.DefaultTracking()
	}
	return trackingOf(r.Settings.Current())
}

// trackingOf is the tracking s's application.* keys say.
func trackingOf(s *argocdcm.Settings) clustercache.Tracking {
	return clustercache.Tracking{Mode: clustercache.TrackingMode(s.Application.TrackingMethod), LabelKey: s.Application.InstanceLabelKey}
}

// retrack applies the argocd-cm tracking in force to every watch cache,
// in the background (it may read objects that become tracked) and one
// change after the other.
func (r *Reconciler) retrack() {
	go func() {
		r.retrackMu.Lock()
		defer r.retrackMu.Unlock()
		ctx, cancel := context.WithTimeout(context.Background(), retrackTimeout)
		defer cancel()
		t := r.tracking()
		for _, c := range r.caches() {
			c.SetTracking(ctx, t)
		}
	}()
}

// loadCapabilities reads the server version and API versions once, for
// Helm's capabilities.
func (r *Reconciler) loadCapabilities(mgr ctrl.Manager) error {
	disc, err := discovery.NewDiscoveryClientForConfig(mgr.GetConfig())
	if err != nil {
		return fmt.Errorf("building discovery client: %w", err)
	}
	caps, err := readCapabilities(disc)
	if err != nil {
		return err
	}
	r.kubeVersion, r.apiVersions = caps.kubeVersion, caps.apiVersions
	return nil
}

type reconcile func(context.Context, ctrl.Request) (ctrl.Result, error)

func (f reconcile) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	return f(ctx, req)
}

// specChanged lets through what needs a new comparison; the controller's
// own status writes (status lives in the main resource, as in Argo CD)
// would otherwise trigger endless comparisons. metadata.generation is no
// help here: without a status subresource every status write bumps it.
type specChanged struct{ predicate.Funcs }

func (specChanged) Update(e event.UpdateEvent) bool {
	oldApp, ok1 := e.ObjectOld.(*v1alpha1.Application)
	newApp, ok2 := e.ObjectNew.(*v1alpha1.Application)
	if !ok1 || !ok2 {
		return true
	}
	return !equalJSON(oldApp.Spec, newApp.Spec) ||
		oldApp.Annotations[v1alpha1.AnnotationRefresh] != newApp.Annotations[v1alpha1.AnnotationRefresh] ||
		!newApp.DeletionTimestamp.Equal(oldApp.DeletionTimestamp) ||
		operationEnded(oldApp, newApp) && !comparedSynced(oldApp, newApp)
}

// operationEnded reports whether an update moves the operation to a phase
// other than Running: its outcome may need a comparison. Requesting an
// operation or starting it does not; the comparison would only wait for
// the result (compareDeferral).
func operationEnded(oldApp, newApp *v1alpha1.Application) bool {
	phase := phaseOf(newApp)
	return phase != phaseOf(oldApp) && phase != v1alpha1.OperationRunning
}

// comparedSynced reports whether an update also carries a new comparison
// that found the app Synced: an operation's result written together with
// the comparison of its outcome needs no comparison after it. A result
// found OutOfSync still triggers one, for auto-sync to decide on.
func comparedSynced(oldApp, newApp *v1alpha1.Application) bool {
	return newApp.Status.ReconciledAt != nil && !newApp.Status.ReconciledAt.Equal(oldApp.Status.ReconciledAt) &&
		newApp.Status.Sync.Status == v1alpha1.SyncStatusCodeSynced
}

// operationRequested lets through Applications with an operation to run.
type operationRequested struct{ predicate.Funcs }

func (operationRequested) Create(e event.CreateEvent) bool { return hasOperation(e.Object) }
func (operationRequested) Update(e event.UpdateEvent) bool { return hasOperation(e.ObjectNew) }
func (operationRequested) Delete(event.DeleteEvent) bool   { return false }
func (operationRequested) Generic(e event.GenericEvent) bool {
	return hasOperation(e.Object)
}

func hasOperation(o client.Object) bool {
	app, ok := o.(*v1alpha1.Application)
	return ok && app.Operation != nil
}

func phaseOf(app *v1alpha1.Application) v1alpha1.OperationPhase {
	if app.Status.OperationState == nil {
		return ""
	}
	return app.Status.OperationState.Phase
}

// enqueueCompare queues a comparison of the app named app without a
// re-render of an unchanged revision; it never blocks.
func (r *Reconciler) enqueueCompare(app string) {
	if !r.owns(app) {
		return
	}
	r.compareNow.offer(r.Namespace, app)
}

// comparisonRequests is an intake of the comparison queue: each event
// asks for a comparison of one app.
type comparisonRequests chan event.TypedGenericEvent[*v1alpha1.Application]

// offer asks for a comparison of the app named app without blocking: when
// the intake is flooded, the periodic refresh catches up.
func (c comparisonRequests) offer(namespace, app string) {
	select {
	case c <- appEvent(namespace, app):
	default:
	}
}

// send asks for a comparison of the app named app, waiting while the
// intake is full until ctx ends.
func (c comparisonRequests) send(ctx context.Context, namespace, app string) error {
	select {
	case c <- appEvent(namespace, app):
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// liveChange queues a comparison of the app whose object changed: at once
// when the object's health moved (the app's health may have, and that is
// what `app wait --health` and the last step of a sync wait for), else
// liveChangeCoalescing later, with the app's other changes.
func (r *Reconciler) liveChange(e clustercache.Event) {
	switch {
	case e.App == "" || !r.owns(e.App):
	case e.HealthChanged:
		r.compareNow.offer(r.Namespace, e.App)
	default:
		r.compareCoalesced.offer(r.Namespace, e.App)
	}
}

// enqueueAfter queues the app of each event after delay. The queue holds
// an app once, at its earliest time, so the events within delay of the
// first are one comparison.
func enqueueAfter(delay time.Duration) handler.TypedEventHandler[*v1alpha1.Application, ctrl.Request] {
	return handler.TypedFuncs[*v1alpha1.Application, ctrl.Request]{
		GenericFunc: func(_ context.Context, e event.TypedGenericEvent[*v1alpha1.Application], q workqueue.TypedRateLimitingInterface[ctrl.Request]) {
			q.AddAfter(ctrl.Request{NamespacedName: client.ObjectKeyFromObject(e.Object)}, delay)
		},
	}
}

// appEvent is the event that queues a comparison of the app named name.
func appEvent(namespace, name string) event.TypedGenericEvent[*v1alpha1.Application] {
	return event.TypedGenericEvent[*v1alpha1.Application]{
		Object: &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace}}}
}

// reconcileCompare refreshes one Application's status.
func (r *Reconciler) reconcileCompare(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	if err := r.Cache.WaitForSync(ctx); err != nil {
		return ctrl.Result{}, err
	}
	if !r.clustersRead() {
		return ctrl.Result{RequeueAfter: registryReadWait}, nil
	}
	if !r.owns(req.Name) {
		r.forgetApp(req.NamespacedName)
		return ctrl.Result{}, nil
	}
	// Lost while it ran: its metric series go with it, not back.
	defer r.forgetSeriesIfLost(req.NamespacedName)
	// Lost while it ran: the comparison stops and writes nothing (the new
	// owner compares the app itself).
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	r.comparing.Store(req.Name, cancel)
	defer r.comparing.Delete(req.Name)
	app := &v1alpha1.Application{}
	if err := r.Client.Get(ctx, req.NamespacedName, app); err != nil {
		if apierrors.IsNotFound(err) {
			r.forgetApp(req.NamespacedName)
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if app.DeletionTimestamp != nil {
		observeAppInfo(app) // operation="delete"
		return r.finalize(ctx, app)
	}
	if fields, reason := app.Status.Unreadable(); len(fields) > 0 {
		return r.repairStatus(ctx, app, fields, reason)
	}
	if r.compared.beingWritten(app.Name) {
		// An operation's result is being written with the comparison of
		// its outcome, to be remembered: wait for it rather than compare
		// the app a second time.
		return ctrl.Result{RequeueAfter: resultWriteWait}, nil
	}
	start := r.now()
	refresh, askedAt := r.takeRefresh(app.Name, app.Annotations[v1alpha1.AnnotationRefresh])
	begun, known := r.operationStarts.get(req.NamespacedName)
	if wait := compareDeferral(app, refresh != "", begun, known, start); wait > 0 {
		return ctrl.Result{RequeueAfter: wait}, nil
	}
	period := r.refreshPeriod()
	maxAge := time.Duration(0)
	switch {
	case refresh != "":
		// Ask git now, or take an answer git gave after the refresh was
		// asked: one ls-remote serves a webhook's refresh of every app of
		// the repository. The scheduled poll stays: the refreshes would
		// otherwise gather the polls of those apps.
		maxAge = time.Nanosecond
		if !askedAt.IsZero() {
			maxAge = max(start.Sub(askedAt), time.Nanosecond)
		}
	case r.polls.take(app.Name, start, period):
		maxAge = pollShareWindow(period)
	}
	hard := refresh == v1alpha1.RefreshHard || r.hardRefreshes.due(app.Name, start, r.hardRefreshPeriod())
	if refresh == "" && !hard && r.unchanged(ctx, app, maxAge) {
		observeComparison(app, comparisonReused)
		return r.recordCompared(ctx, app, maxAge > 0, start)
	}
	orig := app.DeepCopy()
	r.compared.forget(app.Name)
	observeComparison(app, comparisonComputed)
	prevHealth := app.Status.Health.Status

	cmp := r.compare(ctx, app, hard, maxAge, nil)
	if errors.Is(context.Cause(ctx), errAppMoved) || !r.owns(app.Name) {
		return ctrl.Result{}, nil
	}
	healIn := r.autoSync(app, cmp)
	delete(app.Annotations, v1alpha1.AnnotationRefresh)
	if !statusWriteNeeded(orig, app, maxAge > 0, r.now(), period) {
		r.rememberComparison(app, cmp)
		observeReconcile(app, r.now().Sub(start))
		return ctrl.Result{RequeueAfter: r.nextComparison(app.Name, healIn)}, nil
	}
	patch := client.MergeFrom(orig)
	if orig.Operation == nil && app.Operation != nil {
		// An auto-sync decided on a cached copy older than the last
		// operation's result would sync that revision again: the write
		// that starts an operation must be based on the latest version.
		patch = client.MergeFromWithOptions(orig, client.MergeFromWithOptimisticLock{})
	}
	if err := r.Client.Patch(ctx, app, patch); err != nil {
		if apierrors.IsConflict(err) {
			return ctrl.Result{RequeueAfter: time.Millisecond}, nil // compare again on the newer version
		}
		return ctrl.Result{}, fmt.Errorf("writing status: %w", err)
	}
	if orig.Operation == nil && app.Operation != nil {
		r.operationStarts.queued(req.NamespacedName)
		if r.Recorder != nil {
			r.Recorder.Eventf(app, nil, "Normal", eventReasonOperationStarted, "Sync", "Initiated sync to %s", targetRevision(app))
		}
	}
	r.recordHealthChange(app, prevHealth)
	r.rememberComparison(app, cmp)
	observeReconcile(app, r.now().Sub(start))
	return ctrl.Result{RequeueAfter: r.nextComparison(app.Name, healIn)}, nil
}

// nextComparison is how long until app is compared again: at its next
// poll, or when a self-heal's back-off ends if that is sooner; 0 (none)
// when polls are off and no self-heal waits.
func (r *Reconciler) nextComparison(app string, healIn time.Duration) time.Duration {
	return sooner(r.polls.wait(app, r.now(), r.refreshPeriod()), healIn)
}

// sooner is the sooner of two waits, 0 standing for none.
func sooner(a, b time.Duration) time.Duration {
	if a == 0 || b > 0 && b < a {
		return b
	}
	return a
}

// refreshPeriod is how often each app asks git for new commits: argocd-cm's
// timeout.reconciliation when set (0: never), else RefreshPeriod
// (--app-resync).
func (r *Reconciler) refreshPeriod() time.Duration {
	if r.Settings != nil {
		if d := r.Settings.Current().Application.Reconciliation; d != nil {
			return *d
		}
	}
	return r.RefreshPeriod
}

// hardRefreshPeriod is argocd-cm's timeout.hard.reconciliation: how often
// an app's comparison renders past the caches (0: never).
func (r *Reconciler) hardRefreshPeriod() time.Duration {
	if r.Settings == nil {
		return 0
	}
	return r.Settings.Current().Application.HardReconciliation
}

// recordCompared ends a comparison that found nothing new (unchanged): only
// the comparison's timestamps move, and they are written as any
// comparison's are (statusWriteNeeded).
func (r *Reconciler) recordCompared(ctx context.Context, app *v1alpha1.Application, poll bool, start time.Time) (ctrl.Result, error) {
	now := r.now()
	if timestampsDue(app, poll, now, r.refreshPeriod()) {
		if err := r.writeComparedAt(ctx, app, metav1.NewTime(now)); err != nil {
			r.compared.forget(app.Name)
			if apierrors.IsConflict(err) {
				return ctrl.Result{RequeueAfter: time.Millisecond}, nil
			}
			return ctrl.Result{}, fmt.Errorf("writing status: %w", err)
		}
		r.compared.moved(app.Name, app.ResourceVersion)
	}
	observeReconcile(app, r.now().Sub(start))
	return ctrl.Result{RequeueAfter: r.polls.wait(app.Name, r.now(), r.refreshPeriod())}, nil
}

// writeComparedAt writes app's reconciledAt and observedAt, and nothing
// else. It is most of Skiff's writes in steady state, so the patch is
// written directly instead of diffing the whole Application.
func (r *Reconciler) writeComparedAt(ctx context.Context, app *v1alpha1.Application, at metav1.Time) error {
	stamp, err := at.MarshalJSON()
	if err != nil {
		return err
	}
	patch := fmt.Appendf(nil, `{"status":{"reconciledAt":%s,"observedAt":%s}}`, stamp, stamp)
	return r.Client.Patch(ctx, app, client.RawPatch(types.MergePatchType, patch))
}

// rememberComparison keeps what cmp read when its outcome, now in app
// (written or equal but for timestamps), may stand for the next comparison.
func (r *Reconciler) rememberComparison(app *v1alpha1.Application, cmp comparison) {
	if !reusable(app, cmp) {
		r.compared.forget(app.Name)
		return
	}
	in := *cmp.inputs
	in.app = app.ResourceVersion
	r.compared.remember(app.Name, in)
}

// compareDeferral is how long a comparison of app at now waits for its
// operation's result: the result write will carry the comparison of what
// the operation synced, so comparing on the way would only cost work and a
// write (a poll due meanwhile is taken when the operation is over). An
// operation running for less than operationCompareGrace, counted from when
// an operation worker of this process began it (begun), else from its
// recorded start, is looked at again operationCompareDeferral later: most
// syncs finish within the grace; a longer one (waves waiting for health)
// gets its status compared as usual. A request this process made that
// waits for an operation worker (known, begun zero: behind a long wave)
// is looked at again every operationCompareGrace. A refresh never waits.
func compareDeferral(app *v1alpha1.Application, refresh bool, begun time.Time, known bool, now time.Time) time.Duration {
	state := app.Status.OperationState
	if refresh || app.Operation == nil || state == nil || !isRunning(state.Phase) {
		return 0
	}
	started := state.StartedAt.Time
	if !begun.IsZero() {
		started = begun
	}
	switch {
	case now.Sub(started) < operationCompareGrace:
		return operationCompareDeferral
	case known && begun.IsZero():
		return operationCompareGrace
	}
	return 0
}

// statusWriteNeeded decides whether a comparison's outcome is written. Any
// change but the comparison's timestamps is. New timestamps alone are
// written only by a poll (one that asked git), and only when the recorded
// reconciledAt is a period old: polls come a little more often than the
// period, so that a commit is noticed within it, yet each app costs at most
// one write per period in steady state. A comparison that a live change
// triggered and that found nothing new costs no write.
func statusWriteNeeded(orig, updated *v1alpha1.Application, poll bool, now time.Time, period time.Duration) bool {
	return !onlyComparedAtChanged(orig, updated) || timestampsDue(orig, poll, now, period)
}

// timestampsDue reports whether a comparison that changed nothing but its
// timestamps writes them: a poll does when orig's reconciledAt is a period old.
func timestampsDue(orig *v1alpha1.Application, poll bool, now time.Time, period time.Duration) bool {
	recorded := orig.Status.ReconciledAt
	return poll && (recorded == nil || now.Sub(recorded.Time) >= period)
}

// onlyComparedAtChanged reports whether updated differs from orig in
// nothing but the comparison's timestamps (reconciledAt, observedAt).
func onlyComparedAtChanged(orig, updated *v1alpha1.Application) bool {
	withOrigTimes := updated.DeepCopy()
	withOrigTimes.Status.ReconciledAt = orig.Status.ReconciledAt
	withOrigTimes.Status.ObservedAt = orig.Status.ObservedAt
	return equalJSON(orig, withOrigTimes)
}

// recordHealthChange emits an Event when a comparison changed the app's health.
func (r *Reconciler) recordHealthChange(app *v1alpha1.Application, prev v1alpha1.HealthStatusCode) {
	if prev != app.Status.Health.Status && r.Recorder != nil {
		r.Recorder.Eventf(app, nil, "Normal", eventReasonHealthChanged, "Compare",
			"Updated health status: %s -> %s", prev, app.Status.Health.Status)
	}
}

// validate checks the app as the API server and the CLI do
// (appops.Validate) and returns its project and cluster; a message
// explains a spec Skiff cannot act on.
func (r *Reconciler) validate(ctx context.Context, app *v1alpha1.Application) (*v1alpha1.AppProject, clusters.Cluster, string) {
	proj, cluster, err := appops.Validate(ctx, app, func(ctx context.Context, _ string) (*v1alpha1.AppProject, error) {
		return r.project(ctx, app)
	}, r.Clusters)
	if err != nil {
		return nil, clusters.Cluster{}, err.Error()
	}
	if msg := destinationOutOfScope(scopeOf(r.ManagedNamespace, cluster), app.Spec.Destination.Namespace); msg != "" {
		return nil, clusters.Cluster{}, msg
	}
	return proj, cluster, ""
}
