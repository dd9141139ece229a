package diff

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// DryRunCompare asks the API server what a forced server-side apply of
// desired by Skiff's field manager would make of live, and compares that
// answer with live. It is exact where Compare can only predict: admission
// defaults, CRD schemas and fields Skiff applied before but no longer sets
// (which the apply removes). A nil live object is missing, so Modified.
//
// The server answers from the object it stores now; when that is newer than
// live (a controller wrote in between), live is read again, so a stale copy
// does not show another writer's change as a difference.
func DryRunCompare(ctx context.Context, c client.Client, desired, live *unstructured.Unstructured, opts Options) (Result, error) {
	if desired == nil || live == nil {
		return Compare(desired, live, opts)
	}
	const attempts = 5
	for attempt := range attempts {
		applied, err := dryRunApply(ctx, c, desired, opts.manager())
		if err != nil {
			return Result{}, err
		}
		if applied.GetResourceVersion() == live.GetResourceVersion() {
			return compareWhole(desired, applied, live, opts)
		}
		fresh := &unstructured.Unstructured{}
		fresh.SetGroupVersionKind(live.GroupVersionKind())
		if err := c.Get(ctx, client.ObjectKeyFromObject(live), fresh); err != nil {
			return Result{}, fmt.Errorf("reading %s again: %w", describe(live), err)
		}
		// The answer and the fresh copy are of the same stored object: no
		// second dry run is needed.
		if applied.GetResourceVersion() == fresh.GetResourceVersion() {
			return compareWhole(desired, applied, fresh, opts)
		}
		live = fresh
		// A controller rolling the object out writes it many times a
		// second; a short pause lets the burst pass.
		select {
		case <-ctx.Done():
			return Result{}, ctx.Err()
		case <-time.After(time.Duration(attempt+1) * 50 * time.Millisecond):
		}
	}
	return Result{}, fmt.Errorf("dry-run applying %s: object kept changing over %d attempts", describe(desired), attempts)
}

func dryRunApply(ctx context.Context, c client.Client, desired *unstructured.Unstructured, manager string) (*unstructured.Unstructured, error) {
	applied := desired.DeepCopy()
	unstructured.RemoveNestedField(applied.Object, "status")
	for _, f := range serverMetadata {
		unstructured.RemoveNestedField(applied.Object, "metadata", f)
	}
	err := c.Apply(ctx, client.ApplyConfigurationFromUnstructured(applied),
		client.FieldOwner(manager), client.ForceOwnership, client.DryRunAll)
	if err != nil {
		return nil, fmt.Errorf("dry-run applying %s: %w", describe(desired), err)
	}
	return applied, nil
}

// compareWhole compares two complete objects, predicted (what live would
// become) and live, after the same normalization and ignore rules Compare
// uses; rules are matched against desired.
func compareWhole(desired, predicted, live *unstructured.Unstructured, opts Options) (Result, error) {
	p := normalize(predicted, false)
	l := normalize(live, false)
	rules := matchingIgnores(desired, opts.IgnoreDifferences)
	if err := applyIgnores(p, l, rules); err != nil {
		return Result{}, err
	}
	tp, tl, err := toTyped(p, l)
	if err != nil {
		return Result{}, err
	}
	if tp, tl, err = removeManaged(tp, tl, live, rules, opts.manager()); err != nil {
		return Result{}, err
	}
	cmp, err := tl.Compare(tp)
	if err != nil {
		return Result{}, fmt.Errorf("comparing %s: %w", describe(desired), err)
	}
	return renderTyped(tp, tl, !cmp.IsSame())
}
