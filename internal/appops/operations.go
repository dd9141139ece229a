package appops

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/skiffcd/skiff/api/v1alpha1"
)

// Get reads the Application key; ErrNotFound when it does not exist.
func Get(ctx context.Context, c client.Reader, key client.ObjectKey) (*v1alpha1.Application, error) {
	app := &v1alpha1.Application{}
	if err := c.Get(ctx, key, app); err != nil {
		return nil, readError(key.Name, err)
	}
	return app, nil
}

// RetryChanged runs op again, a few times, while it fails with ErrChanged:
// for callers that read the Application in op and may read it again.
func RetryChanged(op func() error) error {
	return retry.OnError(retry.DefaultRetry, func(err error) bool { return errors.Is(err, ErrChanged) }, op)
}

// RequestSync sets op as app's operation, started by initiator, as Argo
// CD's API requests a sync: the Application controller runs it. app is
// the Application as read; the write is conditional on that version
// (ErrChanged when it changed since), so two callers cannot both start
// one. ErrOperationInProgress while another operation is set. app becomes
// the Application as written.
func RequestSync(ctx context.Context, c client.Client, app *v1alpha1.Application, op *v1alpha1.SyncOperation, initiator v1alpha1.OperationInitiator) error {
	if err := CheckSync(op); err != nil {
		return err
	}
	if app.Operation != nil {
		return ErrOperationInProgress
	}
	patch := client.MergeFromWithOptions(app.DeepCopy(), client.MergeFromWithOptimisticLock{})
	app.Operation = &v1alpha1.Operation{Sync: op, InitiatedBy: initiator}
	if err := c.Patch(ctx, app, patch); err != nil {
		return writeError("requesting a sync of", app.Name, err)
	}
	return nil
}

// CheckSync checks a sync request: each resource it selects needs a kind
// and a name.
func CheckSync(op *v1alpha1.SyncOperation) error {
	for _, res := range op.Resources {
		if res.Kind == "" || res.Name == "" {
			return invalid("each resource needs a kind and a name")
		}
	}
	return nil
}

// RollbackOperation returns the sync that rolls app back to history entry
// id, or to the entry before the last one when id is negative. Like Argo CD
// it refuses while automated sync is on (ErrAutomatedRollback), which
// would undo the rollback.
func RollbackOperation(app *v1alpha1.Application, id int64, prune bool) (*v1alpha1.SyncOperation, error) {
	if app.IsAutomated() {
		return nil, ErrAutomatedRollback
	}
	history := app.Status.History
	var entry *v1alpha1.RevisionHistory
	if id < 0 {
		if len(history) < 2 {
			return nil, invalid("application %s has no previous deployment to roll back to", app.Name)
		}
		entry = &history[len(history)-2]
	} else {
		for i := range history {
			if history[i].ID == id {
				entry = &history[i]
			}
		}
		if entry == nil {
			return nil, invalid("application %s has no history entry %d", app.Name, id)
		}
	}
	op := &v1alpha1.SyncOperation{Prune: prune}
	if len(entry.Sources) > 0 {
		op.Sources, op.Revisions = entry.Sources, entry.Revisions
		return op, nil
	}
	// The source as that sync wrote it, pinned to its revision (Argo CD's
	// rollback): the render sees the targetRevision it saw then.
	src := entry.Source
	if src.RepoURL == "" && app.Spec.Source != nil {
		src = *app.Spec.Source
	}
	op.Source, op.Revision = &src, entry.Revision
	return op, nil
}

// Terminate asks the controller to stop the running operation of the
// Application key (ErrNoRunningOperation when none runs). The controller
// writes the operation's progress meanwhile, so a conflict reads the
// Application again and retries.
func Terminate(ctx context.Context, c client.Client, key client.ObjectKey) error {
	return RetryChanged(func() error {
		app, err := Get(ctx, c, key)
		if err != nil {
			return err
		}
		s := app.Status.OperationState
		if app.Operation == nil || s == nil || s.Phase != v1alpha1.OperationRunning {
			return fmt.Errorf("application %s: %w", key.Name, ErrNoRunningOperation)
		}
		patch := client.MergeFromWithOptions(app.DeepCopy(), client.MergeFromWithOptimisticLock{})
		s.Phase = v1alpha1.OperationTerminating
		if err := c.Patch(ctx, app, patch); err != nil {
			return writeError("terminating the operation of", key.Name, err)
		}
		return nil
	})
}

// ApproveDeletion approves, as of now, what waits for a confirmation of
// the Application's: the prunes of its running operation (Prune=confirm)
// and, when it is being deleted, the deletion of its resources
// (Delete=confirm), as `argocd app confirm-deletion` does: it writes the
// deletion-approved annotation, a later approval replacing an earlier one.
func ApproveDeletion(app *v1alpha1.Application, now time.Time) {
	if app.Annotations == nil {
		app.Annotations = map[string]string{}
	}
	app.Annotations[v1alpha1.AnnotationDeletionApproved] = now.UTC().Format(time.RFC3339)
}

// SetFinalizers returns finalizers with the resources finalizer that
// deleting with cascade asks for: foreground (the default) or background
// propagation, or none without cascade. Other finalizers stay.
func SetFinalizers(finalizers []string, cascade bool, propagation string) ([]string, error) {
	var want string
	if cascade {
		switch strings.ToLower(propagation) {
		case "", "foreground":
			want = v1alpha1.FinalizerResources
		case "background":
			want = v1alpha1.FinalizerResourcesBackground
		default:
			return nil, invalid("unknown propagation policy %q: want foreground or background", propagation)
		}
	}
	out := make([]string, 0, len(finalizers)+1)
	for _, f := range finalizers {
		if f != v1alpha1.FinalizerResources && f != v1alpha1.FinalizerResourcesBackground {
			out = append(out, f)
		}
	}
	if want != "" {
		out = append(out, want)
	}
	return out, nil
}

// Delete deletes app, as read, and with cascade its resources (propagation
// foreground or background), as `argocd app delete` does: it first sets
// the resources finalizer to match, conditional on the version read
// (ErrChanged when it changed since). An app already gone is deleted.
func Delete(ctx context.Context, c client.Client, app *v1alpha1.Application, cascade bool, propagation string) error {
	finalizers, err := SetFinalizers(app.Finalizers, cascade, propagation)
	if err != nil {
		return err
	}
	if !slices.Equal(finalizers, app.Finalizers) {
		patch := client.MergeFromWithOptions(app.DeepCopy(), client.MergeFromWithOptimisticLock{})
		app.Finalizers = finalizers
		if err := c.Patch(ctx, app, patch); client.IgnoreNotFound(err) != nil {
			return writeError("preparing to delete application", app.Name, err)
		}
	}
	if err := c.Delete(ctx, app); client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("deleting application %s: %w", app.Name, err)
	}
	return nil
}

// CheckRefresh accepts the refresh modes: v1alpha1.RefreshNormal and
// RefreshHard.
func CheckRefresh(mode string) error {
	if mode != v1alpha1.RefreshNormal && mode != v1alpha1.RefreshHard {
		return invalid("refresh must be %q or %q", v1alpha1.RefreshNormal, v1alpha1.RefreshHard)
	}
	return nil
}

// Refresh asks the controller for a comparison of app (its namespace and
// name are enough) by setting the refresh annotation to mode, as `argocd
// app get --refresh` does. The patch sets the annotation whatever app
// shows: computed against a copy that still shows an earlier refresh's
// annotation, which the controller has since removed, it would be empty
// and no refresh would happen.
func Refresh(ctx context.Context, c client.Writer, app *v1alpha1.Application, mode string) error {
	if err := CheckRefresh(mode); err != nil {
		return err
	}
	patch := client.RawPatch(types.MergePatchType,
		[]byte(`{"metadata":{"annotations":{"`+v1alpha1.AnnotationRefresh+`":"`+mode+`"}}}`))
	if err := c.Patch(ctx, app, patch); err != nil {
		if apierrors.IsNotFound(err) {
			return readError(app.Name, err)
		}
		return fmt.Errorf("refreshing application %s: %w", app.Name, err)
	}
	return nil
}
