package appcli

import (
	"context"
	"errors"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/retry"

	"github.com/skiffcd/skiff/api/v1alpha1"
	"github.com/skiffcd/skiff/internal/appops"
	"github.com/skiffcd/skiff/internal/resourceactions"
)

// Backend is where `skiff app` reads and changes Applications: the
// cluster through a kubeconfig (Kube, `--core`) or Skiff's API server
// after `skiff login` (API). Both answer with the same objects, so the
// commands print the same tables either way.
type Backend interface {
	// List returns the Applications of the given projects (all when
	// none) matching the label selector (all when empty).
	List(ctx context.Context, projects []string, selector string) ([]v1alpha1.Application, error)
	// Get reads an Application; refresh "normal" or "hard" first asks the
	// controller for a comparison, as `argocd app get --refresh` does.
	Get(ctx context.Context, name, refresh string) (*v1alpha1.Application, error)
	// Create creates app; an error wrapping ErrExists when it exists.
	Create(ctx context.Context, app *v1alpha1.Application) error
	// Update replaces app (read by Get); an error for which IsConflict
	// holds when it changed since.
	Update(ctx context.Context, app *v1alpha1.Application) error
	// Sync requests op, refused while another operation is set, and
	// returns the Application as written (for WaitOperation).
	Sync(ctx context.Context, name string, op *v1alpha1.SyncOperation) (*v1alpha1.Application, error)
	// Rollback requests a sync to history entry id (negative: the one
	// before the last), and returns the Application as written.
	Rollback(ctx context.Context, name string, id int64, prune bool) (*v1alpha1.Application, error)
	// Terminate stops the running operation; an error wrapping
	// appops.ErrNoRunningOperation when there is none.
	Terminate(ctx context.Context, name string) error
	// Delete deletes the Application and, with cascade, its resources
	// (propagation foreground or background).
	Delete(ctx context.Context, name string, cascade bool, propagation string) error
	// Diff returns the resources whose live state differs from git.
	Diff(ctx context.Context, name, revision string) ([]appops.ResourceDiff, error)
	// Manifests returns the objects the Application renders to at
	// revision (empty: its target revision).
	Manifests(ctx context.Context, name, revision string) ([]*unstructured.Unstructured, error)
	// Resources lists the Application's live resources: its resource
	// tree through the API server, its managed resources with --core.
	Resources(ctx context.Context, name string) ([]ResourceRef, error)
	// ResourceActions lists the resource actions of r.
	ResourceActions(ctx context.Context, name string, r ResourceRef) ([]resourceactions.Action, error)
	// RunResourceAction runs action on r with params.
	RunResourceAction(ctx context.Context, name string, r ResourceRef, action string, params []resourceactions.Param) error
}

// ErrExists is Create's answer for an Application that exists.
var ErrExists = errors.New("already exists")

// ErrConflict is Update's answer when the Application changed since read.
var ErrConflict = errors.New("the application changed meanwhile")

// IsConflict reports whether err is a write refused because the object
// changed since it was read.
func IsConflict(err error) bool {
	return errors.Is(err, ErrConflict) || apierrors.IsConflict(err)
}

// CreateOutcome says what CreateApp did.
type CreateOutcome string

// The outcomes of CreateApp, as `argocd app create` prints them.
const (
	Created   CreateOutcome = "created"
	Unchanged CreateOutcome = "unchanged"
	Updated   CreateOutcome = "updated"
)

// CreateApp creates app; when it exists with the same spec it is left
// unchanged, with another spec it is replaced only with upsert.
func CreateApp(ctx context.Context, b Backend, app *v1alpha1.Application, upsert bool) (CreateOutcome, error) {
	err := b.Create(ctx, app)
	if err == nil {
		return Created, nil
	}
	if !errors.Is(err, ErrExists) {
		return "", fmt.Errorf("creating application %s: %w", app.Name, err)
	}
	existing, err := b.Get(ctx, app.Name, "")
	if err != nil {
		return "", err
	}
	if equality.Semantic.DeepEqual(existing.Spec, app.Spec) {
		return Unchanged, nil
	}
	if !upsert {
		return "", fmt.Errorf("application %s exists with a different spec; use --upsert to replace it", app.Name)
	}
	existing.Spec = app.Spec
	if err := b.Update(ctx, existing); err != nil {
		return "", fmt.Errorf("updating application %s: %w", app.Name, err)
	}
	return Updated, nil
}

// ChangedBackoff paces the retries of a write refused because the
// Application changed meanwhile: 50 ms doubling, about 1.5 s in all.
var ChangedBackoff = wait.Backoff{Steps: 6, Duration: 50 * time.Millisecond, Factor: 2, Jitter: 0.1}

// EditApp reads the Application name, changes it with edit and writes it
// back, reading again when it changed meanwhile (for about a second and a
// half: the API server reads through a cache that may be behind).
func EditApp(ctx context.Context, b Backend, name string, edit func(*v1alpha1.Application) error) error {
	return retry.OnError(ChangedBackoff, IsConflict, func() error {
		app, err := b.Get(ctx, name, "")
		if err != nil {
			return err
		}
		if err := edit(app); err != nil {
			return err
		}
		return b.Update(ctx, app)
	})
}
