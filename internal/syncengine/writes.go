package syncengine

import (
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/skiffcd/skiff/api/v1alpha1"
	"github.com/skiffcd/skiff/internal/clustercache"
	"github.com/skiffcd/skiff/internal/diff"
	"github.com/skiffcd/skiff/internal/rollout"
)

// do performs one task.
func (r *run) do(ctx context.Context, t Task) error {
	switch {
	case t.PruneSkipped:
		r.record(t, v1alpha1.ResultCodePruneSkipped, "ignored (requires pruning)", "")
		return nil
	case t.Prune:
		if err := r.prune(ctx, t); err != nil {
			r.record(t, v1alpha1.ResultCodeSyncFailed, apiMessage(err), "")
			return err
		}
		r.record(t, v1alpha1.ResultCodePruned, "pruned", "")
		r.mu.Lock()
		r.pruned = true
		r.mu.Unlock()
		return nil
	case t.Hook:
		if res, ok := r.resumedHook(t); ok {
			r.record(t, res.Status, res.Message, res.HookPhase)
			return nil
		}
		if hasPolicy(t, "BeforeHookCreation") {
			if err := r.deleteAndWait(ctx, t.Desired); err != nil {
				r.record(t, v1alpha1.ResultCodeSyncFailed, apiMessage(err), v1alpha1.OperationFailed)
				return err
			}
		}
		if err := r.applyWhenServed(ctx, t); err != nil {
			r.record(t, v1alpha1.ResultCodeSyncFailed, apiMessage(err), v1alpha1.OperationFailed)
			return err
		}
		r.record(t, v1alpha1.ResultCodeSynced, "created", v1alpha1.OperationRunning)
		return nil
	}
	if r.unchanged(t) {
		r.record(t, v1alpha1.ResultCodeSynced, "unchanged", "")
		return nil
	}
	if err := r.applyWhenServed(ctx, t); err != nil {
		r.record(t, v1alpha1.ResultCodeSyncFailed, apiMessage(err), "")
		return err
	}
	verb := "configured"
	if t.Live == nil {
		verb = "created"
	}
	r.record(t, v1alpha1.ResultCodeSynced, fmt.Sprintf("%s %s", strings.ToLower(t.Key.Kind), verb), "")
	return nil
}

// unchanged reports whether t is an object ApplyOutOfSyncOnly leaves alone:
// not a hook, not a prune, live and not modified. Its result is memoized,
// validate and do both ask.
func (r *run) unchanged(t Task) bool {
	if !t.Options.ApplyOutOfSyncOnly || t.Hook || t.Prune || t.PruneSkipped || t.Desired == nil || t.Live == nil || r.req.IsModified == nil {
		return false
	}
	key := taskKey(t)
	r.mu.Lock()
	v, ok := r.unmodified[key]
	r.mu.Unlock()
	if ok {
		return v
	}
	v = !r.req.IsModified(t.Desired, t.Live)
	r.mu.Lock()
	if r.unmodified == nil {
		r.unmodified = map[resultKey]bool{}
	}
	r.unmodified[key] = v
	r.mu.Unlock()
	return v
}

// applyWhenServed applies t, waiting first for its kind to be served when
// this sync creates the kind's CRD.
func (r *run) applyWhenServed(ctx context.Context, t Task) error {
	err := r.apply(ctx, t, false)
	if err == nil || !meta.IsNoMatchError(err) || !r.crdKinds[t.Key.Group+"/"+t.Key.Kind] {
		return err
	}
	var lastErr error
	pollErr := wait.PollUntilContextTimeout(ctx, r.poll(), r.timeout(), false, func(ctx context.Context) (bool, error) {
		lastErr = r.apply(ctx, t, false)
		if lastErr != nil && meta.IsNoMatchError(lastErr) {
			return false, nil
		}
		return true, nil
	})
	if pollErr != nil {
		return fmt.Errorf("its CRD was applied but the kind is not served: %w", lastErr)
	}
	return lastErr
}

// apply writes the desired object: server-side apply, or a replace.
// The response fills obj; a real write of a non-hook records it in
// Result.Applied.
func (r *run) apply(ctx context.Context, t Task, dryRun bool) error {
	var obj *unstructured.Unstructured
	// A write built from the object as read carries its resourceVersion
	// (toApply); a status update in between (a Deployment's, many times
	// during a rollout) fails it, and it is built again from a new read.
	err := retry.RetryOnConflict(retry.DefaultBackoff, func() error {
		var err error
		if obj, err = r.toApply(ctx, t); err != nil {
			return err
		}
		if t.Options.Replace && !t.Hook {
			return r.replace(ctx, obj, dryRun)
		}
		// Git wins for the fields it sets, whoever changed them since
		// (kubectl scale, edit, patch): Argo CD's server-side apply forces
		// conflicts too. Fields git does not set stay with their managers.
		opts := []client.ApplyOption{client.FieldOwner(FieldManager), client.ForceOwnership}
		if dryRun {
			opts = append(opts, client.DryRunAll)
		}
		return r.Client.Apply(ctx, client.ApplyConfigurationFromUnstructured(obj), opts...)
	})
	if err == nil && !dryRun && !t.Hook {
		r.mu.Lock()
		if r.applied == nil {
			r.applied = map[clustercache.ResourceKey]*unstructured.Unstructured{}
		}
		r.applied[t.Key] = obj
		r.mu.Unlock()
	}
	return err
}

// toApply is the object to write for t: git's, with the pod-template hash
// a Rollout put in a Service's selector kept (rollout.KeepServiceSelector)
// and, with RespectIgnoreDifferences, the ignored fields as they are live
// (diff.RespectIgnores). Both read the object at the moment of the write,
// and the write then carries the resourceVersion it was read at: a
// Rollout switching the Service, or an HPA scaling, in between makes the
// write fail rather than put an old value back.
func (r *run) toApply(ctx context.Context, t Task) (*unstructured.Unstructured, error) {
	obj := t.Desired.DeepCopy()
	if t.Live == nil || t.Hook {
		return obj, nil
	}
	steered := t.Live.GetAnnotations()[rollout.AnnotationManagedBy] != ""
	respect := t.Options.RespectIgnoreDifferences && len(r.req.IgnoreDifferences) > 0
	if !steered && !respect {
		return obj, nil
	}
	live := &unstructured.Unstructured{}
	live.SetGroupVersionKind(obj.GroupVersionKind())
	if err := r.Client.Get(ctx, client.ObjectKeyFromObject(obj), live); err != nil {
		if apierrors.IsNotFound(err) {
			return obj, nil
		}
		return nil, err
	}
	if steered {
		rollout.KeepServiceSelector(obj, live)
	}
	if respect {
		var err error
		if obj, err = diff.RespectIgnores(obj, live, r.req.IgnoreDifferences); err != nil {
			return nil, fmt.Errorf("RespectIgnoreDifferences: %w", err)
		}
	}
	obj.SetResourceVersion(live.GetResourceVersion())
	return obj, nil
}

func (r *run) replace(ctx context.Context, obj *unstructured.Unstructured, dryRun bool) error {
	var dry []string
	if dryRun {
		dry = []string{metav1.DryRunAll}
	}
	live := &unstructured.Unstructured{}
	live.SetGroupVersionKind(obj.GroupVersionKind())
	err := r.Client.Get(ctx, client.ObjectKeyFromObject(obj), live)
	if apierrors.IsNotFound(err) {
		return r.Client.Create(ctx, obj, &client.CreateOptions{DryRun: dry, FieldManager: FieldManager})
	}
	if err != nil {
		return err
	}
	obj.SetResourceVersion(live.GetResourceVersion())
	return r.Client.Update(ctx, obj, &client.UpdateOptions{DryRun: dry, FieldManager: FieldManager})
}

func (r *run) prune(ctx context.Context, t Task) error {
	if t.Options.DeleteDisabled {
		return nil
	}
	policy := metav1.DeletePropagationForeground
	switch t.Options.PropagationPolicy {
	case "background":
		policy = metav1.DeletePropagationBackground
	case "orphan":
		policy = metav1.DeletePropagationOrphan
	}
	err := r.Client.Delete(ctx, t.Live.DeepCopy(), client.PropagationPolicy(policy))
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

func (r *run) deleteAndWait(ctx context.Context, obj *unstructured.Unstructured) error {
	current := &unstructured.Unstructured{}
	current.SetGroupVersionKind(obj.GroupVersionKind())
	key := client.ObjectKeyFromObject(obj)
	if err := r.Client.Get(ctx, key, current); apierrors.IsNotFound(err) || meta.IsNoMatchError(err) {
		return nil
	} else if err != nil {
		return err
	}
	if err := r.Client.Delete(ctx, current, client.PropagationPolicy(metav1.DeletePropagationForeground)); err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	return wait.PollUntilContextTimeout(ctx, r.poll(), r.timeout(), true, func(ctx context.Context) (bool, error) {
		err := r.Client.Get(ctx, key, current)
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		return false, err
	})
}

func (r *run) ensureNamespace(ctx context.Context) error {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: r.req.Namespace}}
	if err := r.Client.Create(ctx, ns); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating namespace %s: %w", r.req.Namespace, err)
	}
	return nil
}

// cleanHooks applies hook delete policies once hooks have finished.
func (r *run) cleanHooks(ctx context.Context, hooks []Task) {
	for _, t := range hooks {
		phase := r.hookPhase(t)
		if (phase == v1alpha1.OperationSucceeded && hasPolicy(t, "HookSucceeded")) ||
			(phase == v1alpha1.OperationFailed && hasPolicy(t, "HookFailed")) {
			err := r.Client.Delete(ctx, t.Desired.DeepCopy(), client.PropagationPolicy(metav1.DeletePropagationBackground))
			if err != nil && !apierrors.IsNotFound(err) {
				r.setHookPhase(t, phase, "deleting hook: "+apiMessage(err))
			}
		}
	}
}

func hasPolicy(t Task, policy string) bool {
	for _, p := range t.DeletePolicies {
		if p == policy {
			return true
		}
	}
	return false
}
