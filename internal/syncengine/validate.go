package syncengine

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"

	"github.com/skiffcd/skiff/api/v1alpha1"
	"github.com/skiffcd/skiff/internal/clustercache"
)

// sharedWith names the other Application that manages what t would apply,
// when t fails on shared resources (FailOnSharedResource); "" otherwise.
// The owner is read as tracking reads it.
func sharedWith(t Task, app string, tracking clustercache.Tracking) string {
	if !t.Options.FailOnSharedResource || t.Desired == nil || t.Live == nil || t.Hook {
		return ""
	}
	if owner := clustercache.OwningApp(t.Live, tracking); owner != "" && owner != app {
		return owner
	}
	return ""
}

// failShared records every task whose object another app manages, when
// its FailOnSharedResource option is set, and returns how many there are.
func (r *run) failShared(tasks []Task) int {
	failed := 0
	for _, t := range tasks {
		if owner := sharedWith(t, r.req.App, r.req.Tracking); owner != "" {
			r.record(t, v1alpha1.ResultCodeSyncFailed, fmt.Sprintf("%s is managed by application %s (FailOnSharedResource=true)", describe(t), owner), "")
			failed++
		}
	}
	return failed
}

// validate dry-runs every apply; any failure means nothing is applied.
func (r *run) validate(ctx context.Context, tasks []Task) int {
	creating := map[string]bool{}
	if r.req.Options.CreateNamespace {
		creating[r.req.Namespace] = true
	}
	for _, t := range tasks {
		if t.Desired != nil && t.Key.Kind == "Namespace" {
			creating[t.Key.Name] = true
		}
	}
	var toValidate []Task
	for _, t := range tasks {
		if t.Desired == nil || !t.Options.Validate || r.unchanged(t) {
			continue // an unchanged object is left alone, so not validated either
		}
		if t.Hook && t.Live != nil && hasPolicy(t, "BeforeHookCreation") {
			// The previous run's hook is replaced, not patched: a dry-run
			// apply over it would report immutable fields (a Job's template).
			continue
		}
		if _, ok := r.resumedHook(t); ok {
			continue // neither created nor patched again
		}
		toValidate = append(toValidate, t)
	}
	if !r.needsDryRun(tasks, toValidate) {
		return 0
	}
	errs := concurrently(toValidate, func(t Task) error {
		err := r.apply(ctx, t, true)
		switch {
		case err == nil:
		case meta.IsNoMatchError(err) && (r.crdKinds[t.Key.Group+"/"+t.Key.Kind] || t.Options.SkipDryRunOnMissingResource):
			// Its CRD is applied by this sync, before the object.
		case apierrors.IsNotFound(err) && creating[t.Key.Namespace]:
			// Its namespace is created by this sync.
		default:
			r.record(t, v1alpha1.ResultCodeSyncFailed, apiMessage(err), "")
			return err
		}
		return nil
	})
	failed := 0
	for _, err := range errs {
		if err != nil {
			failed++
		}
	}
	return failed
}

// needsDryRun reports whether the dry run can stop a half-applied change.
// It cannot when the sync changes one object and nothing else: no hook
// runs before it, nothing is pruned, no namespace is created, so a refused
// apply leaves the cluster as it was, exactly as a refused dry run would,
// at half the API calls (an auto-sync of a one-file commit is this case).
func (r *run) needsDryRun(tasks, toValidate []Task) bool {
	switch {
	case r.req.DryRun:
		return true // the dry run is what was asked for
	case len(toValidate) != 1:
		return len(toValidate) > 1
	}
	if r.req.Options.CreateNamespace && r.req.Namespace != "" && !r.req.NamespaceExists {
		return true
	}
	changes := 0
	for _, t := range tasks {
		switch {
		case t.Hook, t.Prune:
			return true
		case t.Desired != nil && !r.unchanged(t):
			changes++
		}
	}
	return changes > 1
}

func countApplies(tasks []Task) int {
	n := 0
	for _, t := range tasks {
		if t.Desired != nil {
			n++
		}
	}
	return n
}
