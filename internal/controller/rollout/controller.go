// Package rollout is the Rollout controller: it runs argoproj.io/v1alpha1
// Rollouts the way Argo Rollouts does. Each pod template revision gets its own
// ReplicaSet; blue-green rollouts switch their active and preview Services
// between them, canaries move replicas (or router weights) step by step.
// Everything the `kubectl argo rollouts` plugin patches (abort, retry,
// promote, pause, restart, undo) is read back from the Rollout on each pass.
// The decisions that need no API server live in internal/rollout.
package rollout

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/skiffcd/skiff/api/v1alpha1"
	"github.com/skiffcd/skiff/internal/ownwrites"
	"github.com/skiffcd/skiff/internal/rollout"
	"github.com/skiffcd/skiff/internal/rollout/traffic"
	"github.com/skiffcd/skiff/internal/rolloutmetrics"
	"github.com/skiffcd/skiff/internal/syncmap"
)

// Annotations Argo Rollouts writes and its tools read.
const (
	AnnotationRevision          = v1alpha1.AnnotationRolloutRevision
	AnnotationScaleDownDeadline = "scale-down-deadline"
	AnnotationManagedBy         = rollout.AnnotationManagedBy
)

// Defaults of the Rollout spec, as Argo Rollouts applies them.
const (
	defaultRevisionHistoryLimit     = 10
	defaultProgressDeadlineSeconds  = 600
	defaultScaleDownDelaySeconds    = rollout.DefaultScaleDownDelaySeconds
	defaultAbortScaleDownDelaySecs  = rollout.DefaultAbortScaleDownDelaySeconds
	restartRequeueInterval          = time.Second
	conflictRetry                   = time.Second // a fallback: the watch event usually comes first
	eventReasonScalingReplicaSet    = "ScalingReplicaSet"
	eventReasonNewReplicaSetCreated = "NewReplicaSetCreated"
)

// Notifier receives the events of Rollouts; it must not block, and it
// copies the Rollout it keeps (the pass shares its parts).
type Notifier interface {
	Notify(ro *v1alpha1.Rollout, reason string)
}

// Reconciler runs Rollouts in every namespace.
type Reconciler struct {
	// Client reads Rollouts, AnalysisRuns and Services (cached) and writes
	// them and ReplicaSets.
	Client client.Client
	// APIReader lists pods on demand for restartAt and reads the Deployment
	// of a workloadRef, so that no informer holds every Pod and Deployment
	// of the cluster.
	APIReader client.Reader
	// Recorder records an Event for each step, switch, abort and promotion;
	// nil records none.
	Recorder events.EventRecorder
	// Notifier is told of every event recorded (Argo Rollouts'
	// notifications fire on them); nil tells nobody.
	Notifier Notifier
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Workers sizes the work queue; default 10.
	Workers int
	// Namespace, when set (skiff server --namespaced), is the only
	// namespace whose ReplicaSets the controller's own cache holds, and
	// ClusterAnalysisTemplates, being cluster-scoped, are not watched. The
	// manager's cache must be limited to it as well.
	Namespace string

	// replicaSets reads the cache of the ReplicaSets Rollouts made.
	replicaSets client.Reader
	// templateMatches holds what adoptEqualTemplate found per Rollout (by
	// namespaced name).
	templateMatches syncmap.Map[client.ObjectKey, templateMatch]
	// replicaSetWrites holds the version of this process's latest write of
	// each ReplicaSet until the cache shows it; rolloutWrites that of each
	// Rollout's status.
	replicaSetWrites ownwrites.Versions[types.UID]
	rolloutWrites    ownwrites.Versions[types.UID]
}

// controllerUIDIndex indexes ReplicaSets and AnalysisRuns by the UID of the
// Rollout that controls them: a pass lists its own, not every one of the
// namespace (a copy of each per pass made 200 Rollouts' passes quadratic).
const controllerUIDIndex = "rollout.controllerUID"

// controllerUID is the controllerUIDIndex of o.
func controllerUID(o client.Object) []string {
	if owner := metav1.GetControllerOf(o); owner != nil && owner.Kind == "Rollout" {
		return []string{string(owner.UID)}
	}
	return nil
}

// ownedBy lists ro's own objects of a cache indexed by controllerUIDIndex.
func ownedBy(ro *v1alpha1.Rollout) []client.ListOption {
	return []client.ListOption{client.InNamespace(ro.Namespace), client.MatchingFields{controllerUIDIndex: string(ro.UID)}}
}

func (r *Reconciler) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}

// SetupWithManager registers the controller. Status patches of the plugin
// (abort, promote) do not bump the generation, so every change of a Rollout
// is reconciled; a pass that changes nothing writes nothing.
//
// ReplicaSets come from a cache of their own that holds only those carrying
// the pod-template-hash label Rollouts give theirs: the manager's would hold
// every Deployment's ReplicaSets in full, with all their status updates.
// Deployments are watched by metadata only, to wake the Rollouts whose
// workloadRef names them; the pass reads the one it needs from the API.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	if r.Workers == 0 {
		r.Workers = 10
	}
	rolloutMade, err := labels.NewRequirement(rollout.PodTemplateHashLabel, selection.Exists, nil)
	if err != nil {
		return fmt.Errorf("setting up the Rollout controller: %w", err)
	}
	var namespaces map[string]cache.Config
	if r.Namespace != "" {
		namespaces = map[string]cache.Config{r.Namespace: {}}
	}
	replicaSets, err := cache.New(mgr.GetConfig(), cache.Options{
		DefaultNamespaces: namespaces,
		Scheme:            mgr.GetScheme(),
		Mapper:            mgr.GetRESTMapper(),
		DefaultTransform:  cache.TransformStripManagedFields(),
		ByObject: map[client.Object]cache.ByObject{
			&appsv1.ReplicaSet{}: {Label: labels.NewSelector().Add(*rolloutMade)},
		},
	})
	if err != nil {
		return fmt.Errorf("setting up the Rollout controller's ReplicaSet cache: %w", err)
	}
	if err := replicaSets.IndexField(context.Background(), &appsv1.ReplicaSet{}, controllerUIDIndex, controllerUID); err != nil {
		return fmt.Errorf("indexing the Rollout controller's ReplicaSets: %w", err)
	}
	if err := mgr.GetFieldIndexer().IndexField(context.Background(), &v1alpha1.AnalysisRun{}, controllerUIDIndex, controllerUID); err != nil {
		return fmt.Errorf("indexing AnalysisRuns by Rollout: %w", err)
	}
	if err := mgr.GetFieldIndexer().IndexField(context.Background(), &v1alpha1.Rollout{}, referencesIndex, references); err != nil {
		return fmt.Errorf("indexing Rollouts by what they name: %w", err)
	}
	if err := mgr.Add(replicaSets); err != nil {
		return fmt.Errorf("setting up the Rollout controller's ReplicaSet cache: %w", err)
	}
	r.replicaSets = replicaSets
	// rollout_info and analysis_run_info read the manager's cache at
	// each scrape.
	rolloutmetrics.Serve(mgr.GetCache(), mgr.Elected())
	b := ctrl.NewControllerManagedBy(mgr).
		Named("rollout").
		For(&v1alpha1.Rollout{}).
		WatchesRawSource(source.Kind(replicaSets, &appsv1.ReplicaSet{},
			handler.TypedEnqueueRequestForOwner[*appsv1.ReplicaSet](mgr.GetScheme(), mgr.GetRESTMapper(), &v1alpha1.Rollout{}, handler.OnlyControllerOwner()))).
		Owns(&v1alpha1.AnalysisRun{}).
		Watches(&corev1.Service{}, handler.EnqueueRequestsFromMapFunc(r.rolloutsNaming("Service"))).
		WatchesMetadata(&appsv1.Deployment{}, handler.EnqueueRequestsFromMapFunc(r.rolloutsNaming("Deployment"))).
		Watches(&v1alpha1.AnalysisTemplate{}, handler.EnqueueRequestsFromMapFunc(r.rolloutsNaming("AnalysisTemplate"))).
		WithOptions(controller.Options{MaxConcurrentReconciles: r.Workers})
	if r.Namespace == "" {
		b = b.Watches(&v1alpha1.ClusterAnalysisTemplate{}, handler.EnqueueRequestsFromMapFunc(r.rolloutsNaming("ClusterAnalysisTemplate")))
	}
	if err := b.Complete(r); err != nil {
		return fmt.Errorf("setting up the Rollout controller: %w", err)
	}
	return nil
}

// referencesIndex indexes Rollouts by what they name, as "Kind/name" (see
// references): a Service, template or Deployment event wakes the Rollouts
// that name it without a copy of every Rollout of the namespace (a
// blue-green update switches as many Services as there are Rollouts).
const referencesIndex = "rollout.references"

// references is the referencesIndex of a Rollout.
func references(o client.Object) []string {
	ro, ok := o.(*v1alpha1.Rollout)
	if !ok {
		return nil
	}
	var keys []string
	for _, name := range serviceNames(ro) {
		if name != "" {
			keys = append(keys, "Service/"+name)
		}
	}
	for _, ref := range templateRefs(ro) {
		kind := "AnalysisTemplate"
		if ref.ClusterScope {
			kind = "ClusterAnalysisTemplate"
		}
		keys = append(keys, kind+"/"+ref.TemplateName)
	}
	if ref := ro.Spec.WorkloadRef; ref != nil {
		keys = append(keys, "Deployment/"+ref.Name)
	}
	return keys
}

// rolloutsNaming wakes the Rollouts that name an object of kind: a Service
// or analysis template created after its Rollout (InvalidSpec until then)
// unblocks it at once, a Deployment's template change starts a new
// revision of the Rollouts whose workloadRef names it. A cluster-scoped
// object wakes Rollouts in every namespace.
func (r *Reconciler) rolloutsNaming(kind string) handler.MapFunc {
	return func(ctx context.Context, o client.Object) []reconcile.Request {
		opts := []client.ListOption{client.MatchingFields{referencesIndex: kind + "/" + o.GetName()}}
		if o.GetNamespace() != "" {
			opts = append(opts, client.InNamespace(o.GetNamespace()))
		}
		var list v1alpha1.RolloutList
		if err := r.Client.List(ctx, &list, opts...); err != nil {
			return nil
		}
		reqs := make([]reconcile.Request, len(list.Items))
		for i := range list.Items {
			reqs[i] = reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&list.Items[i])}
		}
		return reqs
	}
}

// Reconcile brings the ReplicaSets and Services of one Rollout a step closer
// to its spec and writes the status once. Passes are timed and their
// errors counted (rollout_reconcile, rollout_reconcile_error); a deleted
// Rollout's series go.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	start := r.now()
	ro := &v1alpha1.Rollout{}
	if err := r.Client.Get(ctx, req.NamespacedName, ro); err != nil {
		if apierrors.IsNotFound(err) {
			r.templateMatches.Delete(req.NamespacedName)
			rolloutmetrics.Rollouts.Forget(req.NamespacedName)
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !ro.DeletionTimestamp.IsZero() {
		r.rolloutWrites.Forget(ro.UID)
		return ctrl.Result{}, nil
	}
	// A pass that acted on a copy older than its last status write (the
	// informer lags behind it) would redo what that write recorded as
	// done, or undo an abort, and switch Services on its strength before
	// its own status write failed on the conflict. That write's watch
	// event brings the next pass.
	if r.rolloutWrites.CacheOlder(ro.UID, ro.ResourceVersion) {
		return ctrl.Result{RequeueAfter: conflictRetry}, nil
	}
	res, err := r.step(ctx, ro)
	rolloutmetrics.Rollouts.Observe(req.NamespacedName, r.now().Sub(start), err)
	return res, err
}

// step runs one pass over ro.
func (r *Reconciler) step(ctx context.Context, ro *v1alpha1.Rollout) (ctrl.Result, error) {
	p := newPass(r, ro)
	if err := p.sync(ctx); err != nil {
		if apierrors.IsConflict(err) || errors.Is(err, errCacheBehind) {
			// A cached ReplicaSet was older than a write of an earlier
			// pass; its watch event is on the way.
			return ctrl.Result{RequeueAfter: conflictRetry}, nil
		}
		return ctrl.Result{}, err
	}
	if err := p.writeStatus(ctx); err != nil {
		return ctrl.Result{}, err
	}
	p.sendNotifications()
	return ctrl.Result{RequeueAfter: p.requeue}, nil
}

// pass is one reconciliation of one Rollout: what was read, and the status
// being built.
type pass struct {
	r        *Reconciler
	ro       *v1alpha1.Rollout
	status   *v1alpha1.RolloutStatus
	now      time.Time
	replicas int32
	hash     string

	allRS     []*appsv1.ReplicaSet
	newRS     *appsv1.ReplicaSet
	active    *corev1.Service
	preview   *corev1.Service
	canarySvc *corev1.Service
	stableSvc *corev1.Service
	created   bool
	invalid   bool
	requeue   time.Duration
	revision  int64

	// runs are the AnalysisRuns the Rollout owns; retried says this pass
	// is the first after a retry of an abort, and retriedRuns are the runs
	// of the aborted try; gate is what the current runs allow.
	// workload is the Deployment of spec.workloadRef, if any.
	workload *appsv1.Deployment

	// notify are the reasons of the events recorded, for notifications.
	notify []string

	runs        []*v1alpha1.AnalysisRun
	retried     bool
	retriedRuns map[rollout.RunType]*v1alpha1.AnalysisRun
	gate        analysisGate
}

func newPass(r *Reconciler, ro *v1alpha1.Rollout) *pass {
	return &pass{
		r:        r,
		ro:       ro,
		status:   ro.Status.DeepCopy(),
		now:      r.now(),
		replicas: rollout.Replicas(ro),
	}
}

// requeueAfter asks for the next pass within d.
func (p *pass) requeueAfter(d time.Duration) {
	if d <= 0 {
		d = 10 * time.Millisecond
	}
	if p.requeue == 0 || d < p.requeue {
		p.requeue = d
	}
}

func (p *pass) metaNow() metav1.Time { return metav1.NewTime(p.now) }

// event records a Normal event on the Rollout.
func (p *pass) event(reason, format string, args ...any) {
	p.eventOfType(corev1.EventTypeNormal, reason, format, args...)
}

func (p *pass) eventOfType(eventType, reason, format string, args ...any) {
	if p.r.Recorder != nil {
		p.r.Recorder.Eventf(p.ro, nil, eventType, reason, "Reconcile", format, args...)
	}
	if !slices.Contains(p.notify, reason) {
		p.notify = append(p.notify, reason)
	}
}

// sendNotifications hands the pass's event reasons, once each, to the
// notifier, with the status the pass wrote.
func (p *pass) sendNotifications() {
	if p.r.Notifier == nil || len(p.notify) == 0 {
		return
	}
	ro := &v1alpha1.Rollout{TypeMeta: p.ro.TypeMeta, ObjectMeta: p.ro.ObjectMeta, Spec: p.ro.Spec, Status: *p.status}
	ro.Status.Phase, ro.Status.Message = rollout.Phase(ro)
	for _, reason := range p.notify {
		p.r.Notifier.Notify(ro, reason)
	}
}

// sync does the work of the pass; the status is written by the caller.
func (p *pass) sync(ctx context.Context) error {
	p.status.ObservedGeneration = strconv.FormatInt(p.ro.Generation, 10)
	msg, err := p.resolveWorkload(ctx)
	if err != nil {
		return err
	}
	if msg == "" {
		msg = validate(p.ro)
	}
	if msg != "" {
		p.setInvalid(msg)
		return nil
	}
	if err := p.loadServices(ctx); err != nil {
		var missing *missingServiceError
		if errors.As(err, &missing) {
			p.setInvalid(missing.Error())
			return nil
		}
		return err
	}
	rollout.RemoveCondition(p.status, v1alpha1.InvalidSpec)
	p.reportUnsupported()
	if err := p.loadReplicaSets(ctx); err != nil {
		return err
	}
	p.hash = rollout.PodTemplateHash(&p.ro.Spec.Template, p.status.CollisionCount)
	if err := p.adoptEqualTemplate(ctx); err != nil {
		return err
	}
	p.startRevisionIfNew()
	if err := p.ensureNewReplicaSet(ctx); err != nil {
		return err
	}
	if p.newRS == nil {
		// Paused before the new revision got its ReplicaSet: nothing moves.
		p.computeStatus()
		return nil
	}
	p.retried = !p.status.Abort && p.status.AbortedAt != nil
	if err := p.reconcileAnalysis(ctx); err != nil {
		if msg, ok := asInvalidAnalysis(err); ok {
			p.setInvalid(msg)
			p.computeStatus()
			return nil
		}
		return err
	}
	if !p.status.Abort {
		p.status.AbortedAt = nil // retried, or never aborted
	}
	if p.status.Abort && p.status.AbortedAt == nil {
		at := p.metaNow()
		p.status.AbortedAt = &at
		msg := fmt.Sprintf("Rollout aborted update to revision %d", p.revision)
		if p.gate.abortMessage != "" {
			msg += ": " + p.gate.abortMessage
		}
		p.eventOfType(corev1.EventTypeWarning, string(rollout.ReasonRolloutAborted), "%s", msg)
	}
	if p.ro.Spec.Strategy.BlueGreen != nil {
		err = p.syncBlueGreen(ctx)
	} else {
		err = p.syncCanary(ctx)
	}
	if config := (*traffic.ConfigError)(nil); errors.As(err, &config) {
		p.setInvalid("spec.strategy.canary." + config.Error())
		p.computeStatus()
		return nil
	}
	if err != nil {
		return err
	}
	if err := p.restartPods(ctx); err != nil {
		return err
	}
	if err := p.scaleDownWorkload(ctx); err != nil {
		return err
	}
	if err := p.syncRoleMetadata(ctx); err != nil {
		return err
	}
	if err := p.cleanupHistory(ctx); err != nil {
		return err
	}
	p.computeStatus()
	return nil
}

// writeStatus writes the status when the pass changed it.
func (p *pass) writeStatus(ctx context.Context) error {
	// A shallow copy: the write decodes its answer into a zeroed object,
	// so nothing the pass holds is written to.
	updated := &v1alpha1.Rollout{TypeMeta: p.ro.TypeMeta, ObjectMeta: p.ro.ObjectMeta, Spec: p.ro.Spec, Status: *p.status}
	updated.Status.Phase, updated.Status.Message = rollout.Phase(updated)
	if equality.Semantic.DeepEqual(p.ro.Status, updated.Status) {
		return nil
	}
	if err := p.r.Client.Status().Update(ctx, updated); err != nil {
		return fmt.Errorf("writing the status of Rollout %s/%s: %w", p.ro.Namespace, p.ro.Name, err)
	}
	p.r.rolloutWrites.Wrote(updated.UID, updated.ResourceVersion)
	return nil
}
