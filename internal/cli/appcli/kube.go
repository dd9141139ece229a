package appcli

import (
	"context"
	"fmt"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/skiffcd/skiff/api/v1alpha1"
	"github.com/skiffcd/skiff/internal/reposerver"
	"github.com/skiffcd/skiff/internal/source"
)

// Kube is the Backend of `--core`: the cluster of a kubeconfig, with
// diffs and manifests rendered in-process.
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
		if len(projects) == 0 || slices.Contains(projects, app.Spec.Project) {
			apps = append(apps, app)
		}
	}
	return apps, nil
}

// Get reads an Application, first setting the refresh annotation when
// refresh is given.
func (k *Kube) Get(ctx context.Context, name, refresh string) (*v1alpha1.Application, error) {
	app := &v1alpha1.Application{}
	if err := k.Client.Get(ctx, k.key(name), app); err != nil {
		return nil, fmt.Errorf("reading application %s: %w", name, err)
	}
	if refresh == "" {
		return app, nil
	}
	patch := client.MergeFrom(app.DeepCopy())
	if app.Annotations == nil {
		app.Annotations = map[string]string{}
	}
	app.Annotations[v1alpha1.AnnotationRefresh] = refresh
	if err := k.Client.Patch(ctx, app, patch); err != nil {
		return nil, fmt.Errorf("refreshing application %s: %w", name, err)
	}
	return app, nil
}

// Create creates app.
func (k *Kube) Create(ctx context.Context, app *v1alpha1.Application) error {
	err := k.Client.Create(ctx, app)
	if apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("%w: %w", ErrExists, err)
	}
	return err
}

// Update replaces app.
func (k *Kube) Update(ctx context.Context, app *v1alpha1.Application) error {
	return k.Client.Update(ctx, app)
}

// Sync sets op as the Application's operation.
func (k *Kube) Sync(ctx context.Context, name string, op *v1alpha1.SyncOperation) (*v1alpha1.Application, error) {
	return RequestSync(ctx, k.Client, k.key(name), op)
}

// Rollback reads the history and requests the sync to entry id.
func (k *Kube) Rollback(ctx context.Context, name string, id int64, prune bool) (*v1alpha1.Application, error) {
	app, err := k.Get(ctx, name, "")
	if err != nil {
		return nil, err
	}
	op, err := RollbackOperation(app, id, prune)
	if err != nil {
		return nil, err
	}
	return k.Sync(ctx, name, op)
}

// Terminate stops the running operation.
func (k *Kube) Terminate(ctx context.Context, name string) error {
	return Terminate(ctx, k.Client, k.key(name))
}

// Delete sets the resources finalizer as cascade asks and deletes.
func (k *Kube) Delete(ctx context.Context, name string, cascade bool, propagation string) error {
	app := &v1alpha1.Application{}
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := k.Client.Get(ctx, k.key(name), app); err != nil {
			return err
		}
		finalizers, err := SetFinalizers(app.Finalizers, cascade, propagation)
		if err != nil {
			return err
		}
		if slices.Equal(finalizers, app.Finalizers) {
			return nil
		}
		app.Finalizers = finalizers
		return k.Client.Update(ctx, app)
	})
	if err != nil {
		return fmt.Errorf("preparing to delete application %s: %w", name, err)
	}
	if err := k.Client.Delete(ctx, app); err != nil {
		return fmt.Errorf("deleting application %s: %w", name, err)
	}
	return nil
}

// Diff renders the Application and compares it with the live objects.
func (k *Kube) Diff(ctx context.Context, name, revision string) ([]ResourceDiff, error) {
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
func (k *Kube) renderer(ctx context.Context, name string) (*Renderer, *v1alpha1.Application, error) {
	app, err := k.Get(ctx, name, "")
	if err != nil {
		return nil, nil, err
	}
	repo, err := reposerver.NewInDir(k.CacheDir, reposerver.Options{Credentials: reposerver.StaticCredentials(k.RepoCredentials)})
	if err != nil {
		return nil, nil, err
	}
	dyn, err := dynamic.NewForConfig(k.Config)
	if err != nil {
		return nil, nil, fmt.Errorf("building the dynamic client: %w", err)
	}
	disc, err := discovery.NewDiscoveryClientForConfig(k.Config)
	if err != nil {
		return nil, nil, fmt.Errorf("building the discovery client: %w", err)
	}
	version, err := disc.ServerVersion()
	if err != nil {
		return nil, nil, fmt.Errorf("reading the server version: %w", err)
	}
	return &Renderer{
		Repo: repo, Dynamic: dyn, Mapper: k.Client.RESTMapper(), KubeVersion: version.GitVersion,
	}, app, nil
}
