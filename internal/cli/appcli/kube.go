package appcli

import (
	"context"
	"errors"
	"fmt"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/skiffcd/skiff/api/v1alpha1"
	"github.com/skiffcd/skiff/internal/appops"
	"github.com/skiffcd/skiff/internal/clusterops"
	"github.com/skiffcd/skiff/internal/reposerver"
	"github.com/skiffcd/skiff/internal/source"
)

// Kube is the Backend of `--core`: the cluster of a kubeconfig, with
// diffs and manifests rendered in-process. It runs the same operations
// (appops) as the API server.
type Kube struct {
	Client client.Client
	Config *rest.Config
	// Namespace holds the Applications.
	Namespace string
	// CacheDir caches repositories and charts for Diff and Manifests
	// (default $XDG_CACHE_HOME/skiff).
	CacheDir string
	// RepoCredentials reach the repositories when rendering.
	RepoCredentials source.Credentials
}

var _ Backend = (*Kube)(nil)

func (k *Kube) key(name string) client.ObjectKey {
	return client.ObjectKey{Namespace: k.Namespace, Name: name}
}

// List lists the Applications of k.Namespace.
func (k *Kube) List(ctx context.Context, projects []string, selector string) ([]v1alpha1.Application, error) {
	opts := []client.ListOption{client.InNamespace(k.Namespace)}
	if selector != "" {
		sel, err := labels.Parse(selector)
		if err != nil {
			return nil, fmt.Errorf("--selector %q: %w", selector, err)
		}
		opts = append(opts, client.MatchingLabelsSelector{Selector: sel})
	}
	var list v1alpha1.ApplicationList
	if err := k.Client.List(ctx, &list, opts...); err != nil {
		return nil, fmt.Errorf("listing applications in %s: %w", k.Namespace, err)
	}
	apps := list.Items[:0]
	for _, app := range list.Items {
		if len(projects) == 0 || slices.Contains(projects, app.ProjectName()) {
			apps = append(apps, app)
		}
	}
	return apps, nil
}

// Get reads an Application, first setting the refresh annotation when
// refresh is given.
func (k *Kube) Get(ctx context.Context, name, refresh string) (*v1alpha1.Application, error) {
	app, err := appops.Get(ctx, k.Client, k.key(name))
	if err != nil || refresh == "" {
		return app, err
	}
	if err := appops.Refresh(ctx, k.Client, app, refresh); err != nil {
		return nil, err
	}
	return app, nil
}

// validate checks app as the API server and the controller do, reading
// its project and the cluster Secrets from the app's namespace.
func (k *Kube) validate(ctx context.Context, app *v1alpha1.Application) error {
	known, err := clusterops.Ops{Reader: k.Client, Namespace: app.Namespace}.Snapshot(ctx)
	if err != nil {
		return err
	}
	_, _, err = appops.Validate(ctx, app, reposerver.CachedProjects(k.Client, app.Namespace), known)
	return err
}

// Create validates and creates app.
func (k *Kube) Create(ctx context.Context, app *v1alpha1.Application) error {
	if err := k.validate(ctx, app); err != nil {
		return err
	}
	err := k.Client.Create(ctx, app)
	if apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("%w: %w", ErrExists, err)
	}
	return err
}

// Update validates and replaces app.
func (k *Kube) Update(ctx context.Context, app *v1alpha1.Application) error {
	if err := k.validate(ctx, app); err != nil {
		return err
	}
	return k.Client.Update(ctx, app)
}

// requestSync reads the Application and sets the operation op returns for
// it, reading again when it changed meanwhile.
func (k *Kube) requestSync(ctx context.Context, name string, op func(*v1alpha1.Application) (*v1alpha1.SyncOperation, error)) (*v1alpha1.Application, error) {
	var app *v1alpha1.Application
	err := appops.RetryChanged(func() error {
		var err error
		if app, err = appops.Get(ctx, k.Client, k.key(name)); err != nil {
			return err
		}
		sync, err := op(app)
		if err != nil {
			return err
		}
		return appops.RequestSync(ctx, k.Client, app, sync, Initiator)
	})
	return app, err
}

// Sync sets op as the Application's operation.
func (k *Kube) Sync(ctx context.Context, name string, op *v1alpha1.SyncOperation) (*v1alpha1.Application, error) {
	app, err := k.requestSync(ctx, name, func(*v1alpha1.Application) (*v1alpha1.SyncOperation, error) { return op, nil })
	if err != nil {
		return nil, fmt.Errorf("syncing application %s: %w", name, err)
	}
	return app, nil
}

// Rollback reads the history and requests the sync to entry id.
func (k *Kube) Rollback(ctx context.Context, name string, id int64, prune bool) (*v1alpha1.Application, error) {
	app, err := k.requestSync(ctx, name, func(app *v1alpha1.Application) (*v1alpha1.SyncOperation, error) {
		return appops.RollbackOperation(app, id, prune)
	})
	if err != nil {
		return nil, fmt.Errorf("rolling back application %s: %w", name, rollbackHint(err, name))
	}
	return app, nil
}

// rollbackHint says, to a rollback refused because automated sync is on
// (appops.ErrAutomatedRollback, or the API server's answer with its
// message), how to turn it off.
func rollbackHint(err error, name string) error {
	var s *ServerError
	if errors.Is(err, appops.ErrAutomatedRollback) || errors.As(err, &s) && s.Message == appops.ErrAutomatedRollback.Error() {
		return fmt.Errorf("%w (skiff app set %s --sync-policy none)", err, name)
	}
	return err
}

// Terminate stops the running operation.
func (k *Kube) Terminate(ctx context.Context, name string) error {
	return appops.Terminate(ctx, k.Client, k.key(name))
}

// Delete sets the resources finalizer as cascade asks and deletes.
func (k *Kube) Delete(ctx context.Context, name string, cascade bool, propagation string) error {
	return appops.RetryChanged(func() error {
		app, err := appops.Get(ctx, k.Client, k.key(name))
		if err != nil {
			return err
		}
		return appops.Delete(ctx, k.Client, app, cascade, propagation)
	})
}

// Diff renders the Application and compares it with the live objects.
func (k *Kube) Diff(ctx context.Context, name, revision string) ([]appops.ResourceDiff, error) {
	r, app, err := k.renderer(ctx, name)
	if err != nil {
		return nil, err
	}
	return r.Diff(ctx, app, revision)
}

// Manifests renders the Application.
func (k *Kube) Manifests(ctx context.Context, name, revision string) ([]*unstructured.Unstructured, error) {
	r, app, err := k.renderer(ctx, name)
	if err != nil {
		return nil, err
	}
	objs, _, err := r.Desired(ctx, app, revision)
	return objs, err
}

// renderer reads the app and builds a Renderer over an in-process repo
// server.
func (k *Kube) renderer(ctx context.Context, name string) (*appops.Renderer, *v1alpha1.Application, error) {
	app, err := k.Get(ctx, name, "")
	if err != nil {
		return nil, nil, err
	}
	repo, err := reposerver.NewInDir(k.CacheDir, reposerver.Options{Credentials: reposerver.StaticCredentials(k.RepoCredentials)})
	if err != nil {
		return nil, nil, err
	}
	// The live objects are those of the app's cluster.
	known, err := clusterops.Ops{Reader: k.Client, Namespace: app.Namespace}.Snapshot(ctx)
	if err != nil {
		return nil, nil, err
	}
	dest, err := appops.ResolveCluster(app.Spec.Destination, known)
	if err != nil {
		return nil, nil, err
	}
	cfg, mapper := k.Config, k.Client.RESTMapper()
	var dyn dynamic.Interface
	if dest.IsInCluster() {
		dyn, err = dynamic.NewForConfig(cfg)
	} else if cfg, err = dest.RESTConfig(nil); err == nil {
		dyn, mapper, err = appops.LiveClients(cfg)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("building the clients of cluster %s: %w", dest.Name, err)
	}
	disc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, nil, fmt.Errorf("building the discovery client: %w", err)
	}
	version, err := disc.ServerVersion()
	if err != nil {
		return nil, nil, fmt.Errorf("reading the server version: %w", err)
	}
	return &appops.Renderer{
		Repo: repo, Dynamic: dyn, Mapper: mapper, KubeVersion: version.GitVersion,
	}, app, nil
}
