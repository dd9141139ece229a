// Package applicationset is the ApplicationSet controller: it keeps the
// Applications each argoproj.io/v1alpha1 ApplicationSet generates in line
// with it, as Argo CD's ApplicationSet controller does — creating,
// updating and deleting them as the set's policy allows, owned by the set
// so that deleting it deletes them — and runs the set's RollingSync,
// syncing its Applications step by step. The generators and templates are
// not here: Generate gives the Applications a set wants.
package applicationset

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"golang.org/x/sync/errgroup"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"k8s.io/client-go/util/workqueue"
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
	"github.com/skiffcd/skiff/internal/appsetops"
	"github.com/skiffcd/skiff/internal/clusters"
	"github.com/skiffcd/skiff/internal/reposerver"
)

// ownerIndex indexes Applications by the ApplicationSet that controls them.
const ownerIndex = ".metadata.controller"

// retryWait is how soon a pass that met a write race (an app created or
// changed meanwhile) is tried again.
const retryWait = time.Second

// Reconciler is the ApplicationSet controller.
type Reconciler struct {
	// Client reads ApplicationSets and Applications (cached) and writes them.
	Client client.Client
	// Namespace holds the ApplicationSets Skiff serves, and their
	// Applications, as it holds the Applications it serves.
	Namespace string
	// Generate gives the Applications set wants: its generators' parameter
	// sets rendered into its template. An error changes nothing.
	Generate func(ctx context.Context, set *v1alpha1.ApplicationSet) ([]v1alpha1.Application, error)
	// Clusters resolves the generated apps' destinations, and a change of
	// its cluster Secrets passes every set again (cluster generators read
	// them); nil means the in-cluster entry only.
	Clusters clusters.Registry
	// Policy is the server's policy (Argo CD's --policy; "" is sync).
	Policy v1alpha1.ApplicationsSyncPolicy
	// PolicyOverride lets a set's syncPolicy.applicationsSync replace
	// Policy (Argo CD's --enable-policy-override).
	PolicyOverride bool
	Recorder       events.EventRecorder
	// Workers is how many sets are reconciled at once; 0 means 5.
	Workers int
	// Now is the clock; nil means time.Now.
	Now func() time.Time

	// clusterChanges queues the sets when cluster Secrets change.
	clusterChanges chan event.TypedGenericEvent[*v1alpha1.ApplicationSet]
}

// clustersChanged queues every set: a cluster Secret was added, changed
// or deleted. It never blocks; before the controller runs (or on a
// replica that does not lead) the sets are read at its start anyway.
func (r *Reconciler) clustersChanged() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	sets := &v1alpha1.ApplicationSetList{}
	if err := r.Client.List(ctx, sets, client.InNamespace(r.Namespace)); err != nil {
		return
	}
	for i := range sets.Items {
		select {
		case r.clusterChanges <- event.TypedGenericEvent[*v1alpha1.ApplicationSet]{Object: &sets.Items[i]}:
		default:
		}
	}
}

func (r *Reconciler) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}

// SetupWithManager registers the controller: it runs on the leader only
// (controller-runtime's default) and watches the sets of Namespace and the
// Applications they control.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	err := mgr.GetFieldIndexer().IndexField(context.Background(), &v1alpha1.Application{}, ownerIndex, func(o client.Object) []string {
		app, ok := o.(*v1alpha1.Application)
		if !ok || controllerSet(app) == "" {
			return nil
		}
		return []string{controllerSet(app)}
	})
	if err != nil {
		return fmt.Errorf("indexing Applications by ApplicationSet: %w", err)
	}
	inNamespace := predicate.NewPredicateFuncs(func(o client.Object) bool { return o.GetNamespace() == r.Namespace })
	r.clusterChanges = make(chan event.TypedGenericEvent[*v1alpha1.ApplicationSet], 1024)
	if r.Clusters != nil {
		r.Clusters.Subscribe(r.clustersChanged)
	}
	err = ctrl.NewControllerManagedBy(mgr).
		Named("applicationset").
		For(&v1alpha1.ApplicationSet{}, builder.WithPredicates(inNamespace, setChanged{})).
		Watches(&v1alpha1.Application{}, r.appEvents()).
		WatchesRawSource(source.Channel(r.clusterChanges, &handler.TypedEnqueueRequestForObject[*v1alpha1.ApplicationSet]{})).
		WithOptions(controller.Options{MaxConcurrentReconciles: cmp.Or(r.Workers, 5)}).
		Complete(r)
	if err != nil {
		return fmt.Errorf("setting up the ApplicationSet controller: %w", err)
	}
	return nil
}

// Reconcile makes one set's Applications match it and writes its status
// once.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	set := &v1alpha1.ApplicationSet{}
	if err := r.Client.Get(ctx, req.NamespacedName, set); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	owned, err := r.ownedApps(ctx, set)
	if err != nil {
		return ctrl.Result{}, err
	}
	if set.DeletionTimestamp != nil {
		return ctrl.Result{}, r.finalize(ctx, set, owned)
	}
	orig := set.DeepCopy()
	res := r.pass(ctx, set, owned)
	now := metav1.NewTime(r.now())
	rolling := rollingCondition(set, res.rolling)
	switch {
	case res.rolling != nil:
		set.Status.ApplicationStatus = res.rolling.statuses
	case !rollingSyncOn(set):
		set.Status.ApplicationStatus = nil
	}
	set.Status.Conditions = mergeConditions(orig.Status.Conditions, passConditions(res.failure, rolling), now)
	set.Status.Resources = resources(res.apps)
	set.Status.ResourcesCount = int64(len(res.apps))
	if !equalJSON(orig.Status, set.Status) {
		if err := r.Client.Status().Patch(ctx, set, client.MergeFrom(orig)); err != nil {
			return ctrl.Result{}, client.IgnoreNotFound(err)
		}
	}
	if _, ok := set.Annotations[appsetops.RefreshAnnotation]; ok {
		patch := client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"annotations":{"`+appsetops.RefreshAnnotation+`":null}}}`))
		if err := r.Client.Patch(ctx, set, patch); client.IgnoreNotFound(err) != nil {
			return ctrl.Result{}, fmt.Errorf("removing the refresh annotation of ApplicationSet %s: %w", set.Name, err)
		}
	}
	return ctrl.Result{RequeueAfter: res.requeue}, nil
}

// rollingCondition is the RolloutProgressing condition to write: the
// pass's, or under a RollingSync the last one when the pass failed
// before the rollout; nil without a RollingSync.
func rollingCondition(set *v1alpha1.ApplicationSet, rp *rollingPass) *v1alpha1.ApplicationSetCondition {
	if rp != nil {
		return &rp.progressing
	}
	if !rollingSyncOn(set) {
		return nil
	}
	for _, c := range set.Status.Conditions {
		if c.Type == v1alpha1.ApplicationSetConditionRolloutProgressing {
			return &c
		}
	}
	return nil
}

// passResult is what one pass did.
type passResult struct {
	failure failure
	// apps are the set's Applications after the pass.
	apps    []v1alpha1.Application
	rolling *rollingPass
	requeue time.Duration
}

// pass generates set's Applications and brings the cluster's in line
// with them; a generator error or an invalid Application changes nothing.
func (r *Reconciler) pass(ctx context.Context, set *v1alpha1.ApplicationSet, owned []v1alpha1.Application) passResult {
	res := passResult{apps: owned, requeue: requeueAfter(set)}
	generated, err := r.Generate(ctx, set)
	if err != nil {
		res.failure = failure{reason: ReasonGenerationError, message: err.Error()}
		res.requeue = sooner(res.requeue, errorRequeue)
		return res
	}
	want := prepare(set, generated)
	if msgs := invalid(ctx, set, want, r.check); len(msgs) > 0 {
		res.failure = failure{reason: ReasonValidationError, message: summary(msgs), paramsGenerated: true}
		res.requeue = sooner(res.requeue, errorRequeue)
		return res
	}
	w := r.apply(ctx, set, want, owned, effectivePolicy(set, r.Policy, r.PolicyOverride))
	res.apps, res.failure = w.apps, w.failure
	if w.retry {
		res.requeue = sooner(res.requeue, retryWait)
	}
	if res.failure.reason != "" {
		res.requeue = sooner(res.requeue, errorRequeue)
	}
	if !rollingSyncOn(set) {
		return res
	}
	steps := set.Spec.Strategy.RollingSync.Steps
	rp := progress(steps, stepsOf(steps, want), set.Status.ApplicationStatus, res.apps, metav1.NewTime(r.now()))
	res.rolling = &rp
	prunes := map[string]bool{}
	for _, p := range want {
		prunes[p.app.Name] = p.prune
	}
	for _, name := range rp.syncs {
		i := slices.IndexFunc(res.apps, func(a v1alpha1.Application) bool { return a.Name == name })
		err := r.startSync(ctx, &res.apps[i], prunes[name])
		switch {
		case errors.Is(err, appops.ErrChanged), errors.Is(err, appops.ErrOperationInProgress):
			res.requeue = sooner(res.requeue, retryWait)
		case err != nil && res.failure.reason == "":
			res.failure = failure{reason: ReasonSyncApplicationError, message: err.Error(), paramsGenerated: true}
		}
	}
	return res
}

// check checks one Application as the API server checks those it writes.
func (r *Reconciler) check(ctx context.Context, app *v1alpha1.Application) error {
	_, _, err := appops.Validate(ctx, app, reposerver.CachedProjects(r.Client, r.Namespace), r.Clusters)
	return err
}

// startSync starts the sync of a RollingSync step's app, as Argo CD's
// controller does: automated, by the applicationset-controller, with the
// prune of the template's automated policy and the app's sync options.
func (r *Reconciler) startSync(ctx context.Context, app *v1alpha1.Application, prune bool) error {
	op := &v1alpha1.SyncOperation{Prune: prune}
	if sp := app.Spec.SyncPolicy; sp != nil {
		op.SyncOptions = sp.SyncOptions
	}
	return appops.RequestSync(ctx, r.Client, app, op, v1alpha1.OperationInitiator{Username: rollingSyncInitiator, Automated: true})
}

// written is what apply did.
type written struct {
	apps    []v1alpha1.Application
	failure failure
	// retry: an app was created meanwhile by another pass; look again soon.
	retry bool
}

// appWriters bounds the Application writes of one pass in flight: a set of
// a thousand elements written one at a time took 24 s to create its apps
// (bench/appsets), the API client's rate limit is then the bound.
const appWriters = 16

// outcome is what one write of a pass did.
type outcome struct {
	app     *v1alpha1.Application // the app as it stands after the write; nil when gone or not made
	reason  string                // a failure's condition reason
	err     error
	retry   bool
	deleted string // the name of an app deleted
}

// apply creates, updates and deletes the set's Applications as policy
// allows, several at once; a failed write is reported (the first in name
// order of the plan), the others go on.
func (r *Reconciler) apply(ctx context.Context, set *v1alpha1.ApplicationSet, want []planned, owned []v1alpha1.Application, policy v1alpha1.ApplicationsSyncPolicy) written {
	byName := map[string]*v1alpha1.Application{}
	for i := range owned {
		byName[owned[i].Name] = &owned[i]
	}
	wanted := map[string]bool{}
	for i := range want {
		wanted[want[i].app.Name] = true
	}
	var writes []func() outcome
	for i := range want {
		desired := &want[i].app
		found := byName[desired.Name]
		switch {
		case found == nil:
			writes = append(writes, func() outcome {
				app, err := r.create(ctx, set, desired)
				switch {
				case apierrors.IsAlreadyExists(err):
					return outcome{retry: true}
				case err != nil:
					return outcome{reason: ReasonCreateApplicationError, err: err}
				}
				return outcome{app: app}
			})
		case !policy.AllowUpdate():
			writes = append(writes, func() outcome { return outcome{app: found} })
		default:
			writes = append(writes, func() outcome {
				app, err := r.update(ctx, set, found, desired)
				if err != nil {
					return outcome{app: found, reason: ReasonUpdateApplicationError, err: err}
				}
				return outcome{app: app}
			})
		}
	}
	for i := range owned {
		app := &owned[i]
		switch {
		case wanted[app.Name]:
		case !policy.AllowDelete():
			writes = append(writes, func() outcome { return outcome{app: app} })
		default:
			writes = append(writes, func() outcome {
				if err := r.Client.Delete(ctx, app); client.IgnoreNotFound(err) != nil {
					return outcome{app: app, reason: ReasonDeleteApplicationError, err: fmt.Errorf("deleting application %s: %w", app.Name, err)}
				}
				return outcome{deleted: app.Name}
			})
		}
	}
	outcomes := make([]outcome, len(writes))
	var g errgroup.Group
	g.SetLimit(appWriters)
	for i, write := range writes {
		g.Go(func() error {
			outcomes[i] = write()
			return nil
		})
	}
	_ = g.Wait() // every write reports in its outcome
	var w written
	for _, o := range outcomes {
		if o.err != nil && w.failure.reason == "" {
			w.failure = failure{reason: o.reason, message: o.err.Error(), paramsGenerated: true}
		}
		w.retry = w.retry || o.retry
		if o.app != nil {
			w.apps = append(w.apps, *o.app)
		}
		if o.deleted != "" {
			r.event(set, "Deleted", "Delete", "Deleted Application %q", o.deleted)
		}
	}
	slices.SortFunc(w.apps, func(a, b v1alpha1.Application) int { return strings.Compare(a.Name, b.Name) })
	return w
}

// create creates desired for set, unless an Application of that name
// exists: one of another set, or of nobody, is never taken over.
func (r *Reconciler) create(ctx context.Context, set *v1alpha1.ApplicationSet, desired *v1alpha1.Application) (*v1alpha1.Application, error) {
	existing := &v1alpha1.Application{}
	err := r.Client.Get(ctx, client.ObjectKeyFromObject(desired), existing)
	switch {
	case err == nil && controllerSet(existing) == set.Name:
		// Owned, but the index has not caught up: the next pass updates it.
		return nil, apierrors.NewAlreadyExists(v1alpha1.GroupVersion.WithResource("applications").GroupResource(), desired.Name)
	case err == nil && controllerSet(existing) != "":
		return nil, fmt.Errorf("application %s belongs to ApplicationSet %s: it is left as it is", desired.Name, controllerSet(existing))
	case err == nil:
		return nil, fmt.Errorf("application %s already exists and no ApplicationSet manages it: it is left as it is", desired.Name)
	case !apierrors.IsNotFound(err):
		return nil, fmt.Errorf("reading application %s: %w", desired.Name, err)
	}
	app := desired.DeepCopy()
	setOwner(app, set)
	if err := r.Client.Create(ctx, app); err != nil {
		if apierrors.IsAlreadyExists(err) {
			return nil, err
		}
		return nil, fmt.Errorf("creating application %s: %w", desired.Name, err)
	}
	r.event(set, "Created", "Create", "Created Application %q", app.Name)
	return app, nil
}

// update writes what the set owns of found (updated) when it differs.
func (r *Reconciler) update(ctx context.Context, set *v1alpha1.ApplicationSet, found, desired *v1alpha1.Application) (*v1alpha1.Application, error) {
	app, err := updated(found, desired, set)
	if err != nil {
		return nil, fmt.Errorf("application %s: %w", found.Name, err)
	}
	patch := client.MergeFrom(found)
	data, err := patch.Data(app)
	if err != nil {
		return nil, fmt.Errorf("application %s: %w", found.Name, err)
	}
	if string(data) == "{}" {
		return found, nil
	}
	if err := r.Client.Patch(ctx, app, patch); err != nil {
		return nil, fmt.Errorf("updating application %s: %w", found.Name, err)
	}
	r.event(set, "Updated", "Update", "Updated Application %q", app.Name)
	return app, nil
}

// finalize lets a set being deleted go as its policies say (Argo CD's):
// when its policy may not delete Applications, they lose their reference
// to it and outlive it; with preserveResourcesOnDeletion they lose their
// resources finalizer, so that their deletion leaves what they deployed.
// The set's own resources finalizer, which holds it for this, goes last.
func (r *Reconciler) finalize(ctx context.Context, set *v1alpha1.ApplicationSet, owned []v1alpha1.Application) error {
	keepApps := !effectivePolicy(set, r.Policy, r.PolicyOverride).AllowDelete()
	preserve := set.Spec.SyncPolicy != nil && set.Spec.SyncPolicy.PreserveResourcesOnDeletion
	for i := range owned {
		app := &owned[i]
		orig := app.DeepCopy()
		if keepApps {
			app.OwnerReferences = slices.DeleteFunc(app.OwnerReferences, func(ref metav1.OwnerReference) bool { return ref.UID == set.UID })
		}
		if preserve {
			app.Finalizers = withResourcesFinalizer(app.Finalizers, false)
		}
		if equalJSON(orig.ObjectMeta, app.ObjectMeta) {
			continue
		}
		if err := r.Client.Patch(ctx, app, client.MergeFrom(orig)); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("releasing application %s from ApplicationSet %s: %w", app.Name, set.Name, err)
		}
	}
	if !slices.Contains(set.Finalizers, v1alpha1.FinalizerResources) {
		return nil
	}
	orig := set.DeepCopy()
	set.Finalizers = slices.DeleteFunc(set.Finalizers, func(f string) bool { return f == v1alpha1.FinalizerResources })
	if err := r.Client.Patch(ctx, set, client.MergeFrom(orig)); client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("removing the finalizer of ApplicationSet %s: %w", set.Name, err)
	}
	return nil
}

// ownedApps lists the Applications set controls, by name.
func (r *Reconciler) ownedApps(ctx context.Context, set *v1alpha1.ApplicationSet) ([]v1alpha1.Application, error) {
	list := &v1alpha1.ApplicationList{}
	if err := r.Client.List(ctx, list, client.InNamespace(set.Namespace), client.MatchingFields{ownerIndex: set.Name}); err != nil {
		return nil, fmt.Errorf("listing the applications of ApplicationSet %s: %w", set.Name, err)
	}
	slices.SortFunc(list.Items, func(a, b v1alpha1.Application) int { return strings.Compare(a.Name, b.Name) })
	return list.Items, nil
}

func (r *Reconciler) event(set *v1alpha1.ApplicationSet, reason, action, note string, args ...any) {
	if r.Recorder != nil {
		r.Recorder.Eventf(set, nil, "Normal", reason, action, note, args...)
	}
}

// setChanged lets through the changes of a set a pass acts on: not its
// status, which the pass writes.
type setChanged struct{ predicate.Funcs }

func (setChanged) Update(e event.UpdateEvent) bool {
	o, n := e.ObjectOld, e.ObjectNew
	return o.GetGeneration() != n.GetGeneration() || !equalJSON(o.GetLabels(), n.GetLabels()) ||
		!equalJSON(withoutRefresh(o.GetAnnotations()), withoutRefresh(n.GetAnnotations())) || refreshAsked(n) && !refreshAsked(o) ||
		!equalJSON(o.GetFinalizers(), n.GetFinalizers()) || !o.GetDeletionTimestamp().Equal(n.GetDeletionTimestamp())
}

// withoutRefresh is annotations but the refresh one: its removal, the
// controller's own, asks for nothing.
func withoutRefresh(annotations map[string]string) map[string]string {
	out := maps.Clone(annotations)
	delete(out, appsetops.RefreshAnnotation)
	return out
}

// refreshAsked reports whether set carries the refresh annotation.
func refreshAsked(set client.Object) bool {
	_, ok := set.GetAnnotations()[appsetops.RefreshAnnotation]
	return ok
}

// statusCoalescing is how long a pass that an app's status change asks
// for waits under a RollingSync, whose next step waits on it: while
// hundreds of a set's apps sync, their changes within it cost one pass,
// not one each. Other sets follow their apps' progress only in
// status.resources, which statusRefresh keeps fresh enough: a pass a
// second over a thousand apps doubled the CPU of their initial sync and
// slowed it by 40 % (bench/appsets), as Argo CD, which passes such sets on
// their apps' status changes not at all, never does.
const (
	statusCoalescing = time.Second
	statusRefresh    = 10 * time.Second
)

// progressDelay is how soon an app's status change passes its set.
func (r *Reconciler) progressDelay(ctx context.Context, key client.ObjectKey) time.Duration {
	set := &v1alpha1.ApplicationSet{}
	if err := r.Client.Get(ctx, key, set); err == nil && !rollingSyncOn(set) {
		return statusRefresh
	}
	return statusCoalescing
}

// appEvents queues the set that controls an Application of Namespace
// (Argo CD's shouldRequeueApplicationSet): at once when what the set owns
// of it changed (spec, labels, annotations, finalizers, owners) or it was
// deleted, statusCoalescing later when its sync, revisions, health or
// operation moved (status.resources and a RollingSync follow them). The
// creation of an app is the set's own doing.
func (r *Reconciler) appEvents() handler.TypedEventHandler[client.Object, ctrl.Request] {
	enqueue := func(app client.Object, q workqueue.TypedRateLimitingInterface[ctrl.Request], delay time.Duration) {
		a, ok := app.(*v1alpha1.Application)
		if !ok || a.Namespace != r.Namespace || controllerSet(a) == "" {
			return
		}
		req := ctrl.Request{NamespacedName: client.ObjectKey{Namespace: a.Namespace, Name: controllerSet(a)}}
		if delay == 0 {
			q.Add(req)
			return
		}
		q.AddAfter(req, delay)
	}
	return handler.Funcs{
		UpdateFunc: func(ctx context.Context, e event.UpdateEvent, q workqueue.TypedRateLimitingInterface[ctrl.Request]) {
			o, ok1 := e.ObjectOld.(*v1alpha1.Application)
			n, ok2 := e.ObjectNew.(*v1alpha1.Application)
			switch {
			case !ok1 || !ok2:
			case ownedFieldsChanged(o, n):
				enqueue(o, q, 0) // the set that owned it, should it have let it go
				enqueue(n, q, 0)
			case progressChanged(o, n) && controllerSet(n) != "":
				enqueue(n, q, r.progressDelay(ctx, client.ObjectKey{Namespace: n.Namespace, Name: controllerSet(n)}))
			}
		},
		DeleteFunc: func(_ context.Context, e event.DeleteEvent, q workqueue.TypedRateLimitingInterface[ctrl.Request]) {
			enqueue(e.Object, q, 0)
		},
	}
}

// ownedFieldsChanged reports whether what a set owns of an app changed.
func ownedFieldsChanged(o, n *v1alpha1.Application) bool {
	return !equalJSON(o.Spec, n.Spec) || !equalJSON(o.Labels, n.Labels) || !equalJSON(o.Annotations, n.Annotations) ||
		!equalJSON(o.Finalizers, n.Finalizers) || !equalJSON(o.OwnerReferences, n.OwnerReferences) ||
		(o.DeletionTimestamp == nil) != (n.DeletionTimestamp == nil)
}

// progressChanged reports whether an app's sync, revisions, health or
// operation moved.
func progressChanged(o, n *v1alpha1.Application) bool {
	return o.Status.Sync.Status != n.Status.Sync.Status || !slices.Equal(revisionsOf(o), revisionsOf(n)) ||
		o.Status.Health.Status != n.Status.Health.Status || (o.Operation == nil) != (n.Operation == nil) ||
		operationPhase(o) != operationPhase(n) || !startedAt(o).Equal(startedAt(n))
}

// startedAt is when app's last operation began; zero without one.
func startedAt(app *v1alpha1.Application) time.Time {
	if app.Status.OperationState == nil {
		return time.Time{}
	}
	return app.Status.OperationState.StartedAt.Time
}

// equalJSON reports whether a and b serialise alike.
func equalJSON(a, b any) bool {
	x, err1 := json.Marshal(a)
	y, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && bytes.Equal(x, y)
}
