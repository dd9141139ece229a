package application

import (
	"context"
	"fmt"
	"slices"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/skiffcd/skiff/api/v1alpha1"
	"github.com/skiffcd/skiff/internal/appops"
	"github.com/skiffcd/skiff/internal/clustercache"
	"github.com/skiffcd/skiff/internal/health"
	"github.com/skiffcd/skiff/internal/hook"
	"github.com/skiffcd/skiff/internal/syncengine"
)

// annotationHelmResourcePolicy set to keep spares an object from its
// app's cascading deletion, as Argo CD honours Helm's.
const annotationHelmResourcePolicy = "helm.sh/resource-policy"

// finalize lets a deleted Application go through its finalizers in Argo
// CD's order: its resources are deleted (the resources finalizer), then its
// PostDelete hooks run until they succeed (FinalizerPostDelete), then their
// delete policies apply (FinalizerPostDeleteCleanup). Each step removes its
// finalizer when done and asks for the next at once: removing a finalizer
// is no change the comparison controller's predicate lets through.
func (r *Reconciler) finalize(ctx context.Context, app *v1alpha1.Application) (ctrl.Result, error) {
	switch {
	case app.ResourcesFinalizer() != "":
		return r.deleteResources(ctx, app)
	case app.HasFinalizer(v1alpha1.FinalizerPostDelete):
		return r.runPostDeleteHooks(ctx, app)
	case app.HasFinalizer(v1alpha1.FinalizerPostDeleteCleanup):
		return r.cleanPostDeleteHooks(ctx, app)
	}
	return ctrl.Result{}, nil
}

// deletionTarget is the watch cache and engine of the app's cluster as its
// spec names it now: after a restart no comparison may have found it yet.
func (r *Reconciler) deletionTarget(app *v1alpha1.Application) (target, error) {
	cluster, err := appops.ResolveCluster(app.Spec.Destination, r.Clusters)
	if err != nil {
		return target{}, err
	}
	return r.useCluster(app.Name, cluster)
}

// deleteResources deletes the app's resources (but those it must keep),
// once a deletion they need confirmed is approved, and removes the
// resources finalizer when they are gone.
func (r *Reconciler) deleteResources(ctx context.Context, app *v1alpha1.Application) (ctrl.Result, error) {
	finalizer := app.ResourcesFinalizer()
	policy := metav1.DeletePropagationForeground
	if finalizer == v1alpha1.FinalizerResourcesBackground {
		policy = metav1.DeletePropagationBackground
	}
	tgt, err := r.deletionTarget(app)
	if err != nil {
		return ctrl.Result{}, fmt.Errorf("deleting the resources of %s: %w", app.Name, err)
	}
	approved := app.DeletionApproved(app.DeletionTimestamp.Time)
	doomed, unconfirmed, err := cascadeDeletion(tgt.cache.AppObjects(app.Name), policyOptions(app), approved)
	if msg := deletionWaitMessage(unconfirmed, err); msg != "" {
		return ctrl.Result{RequeueAfter: finalizerPollInterval}, r.setDeletionError(ctx, app, msg)
	}
	for _, obj := range doomed {
		if obj.GetDeletionTimestamp() != nil {
			continue
		}
		if err := tgt.engine.Client.Delete(withAppRequests(ctx, app, false), obj.DeepCopy(), client.PropagationPolicy(policy)); err != nil && !apierrors.IsNotFound(err) {
			return ctrl.Result{}, fmt.Errorf("deleting %s: %w", clustercache.KeyOf(obj), err)
		}
	}
	if len(doomed) > 0 {
		return ctrl.Result{RequeueAfter: finalizerPollInterval}, nil
	}
	return r.removeFinalizer(ctx, app, finalizer)
}

// cascadeDeletion decides which of an app's live objects its cascading
// deletion deletes (those already being deleted included, to wait for):
// all but those whose sync options (the app's, the object's over them)
// say Delete=false and those Helm's resource policy keeps. Objects with
// Delete=confirm are listed in unconfirmed unless approved; then nothing
// may be deleted yet. Unreadable sync options are an error: nothing is
// deleted on a guess.
func cascadeDeletion(live []*unstructured.Unstructured, appOptions []string, approved bool) (doomed []*unstructured.Unstructured, unconfirmed []string, err error) {
	base, err := syncengine.ParseOptions(appOptions)
	if err != nil {
		return nil, nil, err
	}
	for _, obj := range live {
		opts, err := base.Merge(obj.GetAnnotations()[syncengine.AnnotationSyncOptions])
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", clustercache.KeyOf(obj), err)
		}
		if opts.DeleteDisabled || obj.GetAnnotations()[annotationHelmResourcePolicy] == "keep" {
			continue
		}
		if opts.DeleteConfirm && !approved {
			unconfirmed = append(unconfirmed, syncengine.ConfirmationName(obj))
		}
		doomed = append(doomed, obj)
	}
	slices.Sort(unconfirmed)
	return doomed, unconfirmed, nil
}

// deletionWaitMessage is the DeletionError a deletion waits with, "" when
// it need not wait.
func deletionWaitMessage(unconfirmed []string, err error) string {
	switch {
	case err != nil:
		return "cannot delete the app's resources: " + err.Error()
	case len(unconfirmed) > 0:
		return "waiting for deletion confirmation of " + syncengine.AndMore(unconfirmed)
	}
	return ""
}

// runPostDeleteHooks creates the PostDelete hooks of the app's manifests
// that do not exist yet and waits until all have succeeded; one that
// failed keeps the app, with a DeletionError, until it is deleted (then it
// runs again) or the finalizer is removed by hand.
func (r *Reconciler) runPostDeleteHooks(ctx context.Context, app *v1alpha1.Application) (ctrl.Result, error) {
	tgt, err := r.deletionTarget(app)
	if err != nil {
		return ctrl.Result{}, fmt.Errorf("running the PostDelete hooks of %s: %w", app.Name, err)
	}
	resp, err := r.Repo.Manifests(ctx, r.manifestRequest(app, tgt.caps, false, 0))
	if err != nil {
		return ctrl.Result{RequeueAfter: finalizerPollInterval}, r.setDeletionError(ctx, app, "rendering the PostDelete hooks: "+err.Error())
	}
	var hooks []*unstructured.Unstructured
	for _, obj := range appops.DefaultNamespaces(resp.Manifests, app.Spec.Destination.Namespace, tgt.isNamespaced) {
		if hook.IsPostDelete(obj) {
			hooks = append(hooks, obj)
		}
	}
	live := map[clustercache.ResourceKey]*unstructured.Unstructured{}
	for _, h := range hooks {
		obj := &unstructured.Unstructured{}
		obj.SetGroupVersionKind(h.GroupVersionKind())
		err := tgt.engine.Client.Get(ctx, client.ObjectKeyFromObject(h), obj)
		switch {
		case err == nil:
			live[clustercache.KeyOf(h)] = obj
		case !apierrors.IsNotFound(err):
			return ctrl.Result{}, fmt.Errorf("reading PostDelete hook %s: %w", clustercache.KeyOf(h), err)
		}
	}
	progress := postDeleteProgress(hooks, live)
	for _, h := range progress.create {
		obj := h.DeepCopy()
		clustercache.Track(obj, app.Name, r.tracking())
		if err := tgt.engine.Client.Create(withAppRequests(ctx, app, false), obj, client.FieldOwner(syncengine.FieldManager)); err != nil && !apierrors.IsAlreadyExists(err) {
			return ctrl.Result{RequeueAfter: finalizerPollInterval}, r.setDeletionError(ctx, app, fmt.Sprintf("creating PostDelete hook %s: %s", syncengine.ConfirmationName(obj), err))
		}
	}
	if len(progress.failed) > 0 {
		return ctrl.Result{RequeueAfter: finalizerPollInterval}, r.setDeletionError(ctx, app, "PostDelete hook failed: "+syncengine.AndMore(progress.failed))
	}
	if len(progress.create) > 0 || len(progress.running) > 0 {
		return ctrl.Result{RequeueAfter: finalizerPollInterval}, nil
	}
	return r.removeFinalizer(ctx, app, v1alpha1.FinalizerPostDelete)
}

// postDeleteState is where an app's PostDelete hooks stand.
type postDeleteState struct {
	// create are the hooks not created yet.
	create []*unstructured.Unstructured
	// running and failed name the hooks neither Healthy nor Degraded, and
	// the Degraded ones with their message.
	running, failed []string
}

// postDeleteProgress judges hooks, the PostDelete hooks of the app's
// manifests, by their live objects (by key; absent when not created).
func postDeleteProgress(hooks []*unstructured.Unstructured, live map[clustercache.ResourceKey]*unstructured.Unstructured) postDeleteState {
	var s postDeleteState
	for _, h := range hooks {
		obj, ok := live[clustercache.KeyOf(h)]
		if !ok {
			s.create = append(s.create, h)
			continue
		}
		switch res := health.Assess(obj); res.Status {
		case v1alpha1.HealthStatusHealthy:
		case v1alpha1.HealthStatusDegraded:
			s.failed = append(s.failed, fmt.Sprintf("%s: %s", syncengine.ConfirmationName(obj), res.Message))
		default:
			s.running = append(s.running, syncengine.ConfirmationName(obj))
		}
	}
	return s
}

// cleanPostDeleteHooks applies the delete policies of the app's PostDelete
// hooks, as Argo CD does after they ran: by their health together.
func (r *Reconciler) cleanPostDeleteHooks(ctx context.Context, app *v1alpha1.Application) (ctrl.Result, error) {
	tgt, err := r.deletionTarget(app)
	if err != nil {
		return ctrl.Result{}, fmt.Errorf("cleaning the PostDelete hooks of %s: %w", app.Name, err)
	}
	var hooks []*unstructured.Unstructured
	for _, obj := range tgt.cache.AppObjects(app.Name) {
		if !hook.IsPostDelete(obj) {
			continue
		}
		full, ok, err := tgt.cache.GetFull(ctx, clustercache.KeyOf(obj))
		if err != nil {
			return ctrl.Result{}, fmt.Errorf("reading PostDelete hook %s: %w", clustercache.KeyOf(obj), err)
		}
		if ok {
			hooks = append(hooks, full)
		}
	}
	doomed := hooksToClean(hooks)
	for _, obj := range doomed {
		if obj.GetDeletionTimestamp() != nil {
			continue
		}
		err := tgt.engine.Client.Delete(withAppRequests(ctx, app, false), obj.DeepCopy(), client.PropagationPolicy(metav1.DeletePropagationBackground))
		if err != nil && !apierrors.IsNotFound(err) {
			return ctrl.Result{}, fmt.Errorf("deleting PostDelete hook %s: %w", clustercache.KeyOf(obj), err)
		}
	}
	if len(doomed) > 0 {
		return ctrl.Result{RequeueAfter: finalizerPollInterval}, nil
	}
	return r.removeFinalizer(ctx, app, v1alpha1.FinalizerPostDeleteCleanup)
}

// hooksToClean returns the PostDelete hooks their delete policies remove
// (those being deleted included, to wait for): HookSucceeded ones when all
// hooks are Healthy, HookFailed ones when any is Degraded.
func hooksToClean(hooks []*unstructured.Unstructured) []*unstructured.Unstructured {
	failed := slices.ContainsFunc(hooks, func(h *unstructured.Unstructured) bool {
		return health.Assess(h).Status == v1alpha1.HealthStatusDegraded
	})
	policy := hook.HookSucceeded
	if failed {
		policy = hook.HookFailed
	}
	var doomed []*unstructured.Unstructured
	for _, h := range hooks {
		if slices.Contains(hook.DeletePolicies(h), policy) {
			doomed = append(doomed, h)
		}
	}
	return doomed
}

// setDeletionError records why a deleted app stays, when it changed.
func (r *Reconciler) setDeletionError(ctx context.Context, app *v1alpha1.Application, message string) error {
	orig := app.DeepCopy()
	conds := newConditions(app.Status.Conditions, metav1.NewTime(r.now()))
	conds.set(v1alpha1.ApplicationConditionDeletionError, message)
	app.Status.Conditions = conds.list()
	if equalJSON(orig.Status.Conditions, app.Status.Conditions) {
		return nil
	}
	if err := r.Client.Patch(ctx, app, client.MergeFrom(orig)); err != nil {
		return client.IgnoreNotFound(err)
	}
	return nil
}

// removeFinalizer lets go of one of the app's finalizers (and of a
// DeletionError its step set) and asks for the next step at once.
func (r *Reconciler) removeFinalizer(ctx context.Context, app *v1alpha1.Application, finalizer string) (ctrl.Result, error) {
	patch := client.MergeFrom(app.DeepCopy())
	app.Finalizers = slices.DeleteFunc(slices.Clone(app.Finalizers), func(f string) bool { return f == finalizer })
	conds := newConditions(app.Status.Conditions, metav1.NewTime(r.now()))
	conds.clear(v1alpha1.ApplicationConditionDeletionError)
	app.Status.Conditions = conds.list()
	if err := r.Client.Patch(ctx, app, patch); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if len(app.Finalizers) == 0 {
		return ctrl.Result{}, nil
	}
	return ctrl.Result{RequeueAfter: time.Millisecond}, nil
}

// postDeleteFinalizers returns finalizers with both PostDelete finalizers
// when the app's manifests hold PostDelete hooks (hooks), without them
// otherwise; the others stay as they are, in their order.
func postDeleteFinalizers(finalizers []string, hooks bool) []string {
	postDelete := []string{v1alpha1.FinalizerPostDelete, v1alpha1.FinalizerPostDeleteCleanup}
	if !hooks {
		out := slices.DeleteFunc(slices.Clone(finalizers), func(f string) bool { return slices.Contains(postDelete, f) })
		if len(out) == len(finalizers) {
			return finalizers
		}
		return out
	}
	out := finalizers
	for _, f := range postDelete {
		if !slices.Contains(out, f) {
			out = append(slices.Clone(out), f)
		}
	}
	return out
}
