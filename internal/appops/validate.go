package appops

import (
	"cmp"
	"context"
	"errors"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/skiffcd/skiff/api/v1alpha1"
	"github.com/skiffcd/skiff/internal/clusters"
	"github.com/skiffcd/skiff/internal/opserr"
	"github.com/skiffcd/skiff/internal/project"
	"github.com/skiffcd/skiff/internal/reposerver"
)

// Validate checks that Skiff can act on app: its spec (CheckSpec), that
// its destination is a cluster of reg (ResolveCluster), that its project
// exists and that the project permits its sources and destination
// (CheckProject). projects reads the project: an error for
// which apierrors.IsNotFound holds means it does not exist
// (reposerver.CachedProjects; the controller's also creates the default
// project). It returns the project and the cluster. The controller
// checks every comparison and sync with it, the API server and the CLI
// every app they write, so that all refuse the same apps, with the same
// messages (ErrInvalid).
func Validate(ctx context.Context, app *v1alpha1.Application, projects reposerver.ProjectFunc, reg ClusterResolver) (*v1alpha1.AppProject, clusters.Cluster, error) {
	if err := CheckSpec(app); err != nil {
		return nil, clusters.Cluster{}, err
	}
	cluster, err := ResolveCluster(app.Spec.Destination, reg)
	if err != nil {
		return nil, clusters.Cluster{}, err
	}
	name := app.ProjectName()
	proj, err := projects(ctx, name)
	switch {
	case apierrors.IsNotFound(err):
		return nil, clusters.Cluster{}, invalid("application references project %s which does not exist", name)
	case err != nil:
		return nil, clusters.Cluster{}, err
	}
	if err := CheckProject(app, proj, cluster); err != nil {
		return nil, clusters.Cluster{}, err
	}
	return proj, cluster, nil
}

// ClusterResolver finds the cluster of a destination: a clusters.Registry,
// or one clusters.Snapshot of the cluster Secrets.
type ClusterResolver interface {
	Resolve(dest v1alpha1.ApplicationDestination) (clusters.Cluster, error)
}

// localOnly is the registry of a Skiff given none: the in-cluster entry.
var localOnly = clusters.NewStatic()

// ResolveCluster finds the cluster dest names in reg (nil: the cluster
// Skiff runs against only); an unknown one, or a name and a server of two
// clusters, is ErrInvalid.
func ResolveCluster(dest v1alpha1.ApplicationDestination, reg ClusterResolver) (clusters.Cluster, error) {
	if reg == nil {
		reg = localOnly
	}
	c, err := reg.Resolve(dest)
	if errors.Is(err, clusters.ErrNotFound) {
		return clusters.Cluster{}, invalid("cluster %q is not configured: %v", cmp.Or(dest.Server, dest.Name), err)
	}
	return c, err
}

// CheckSpec checks what an app must have whatever its project: a name the
// API server takes, sources with a repository each, and a destination
// cluster (by server or name).
func CheckSpec(app *v1alpha1.Application) error {
	if msgs := validation.IsDNS1123Subdomain(app.Name); len(msgs) > 0 {
		return invalid("metadata.name %q: %s", app.Name, strings.Join(msgs, "; "))
	}
	srcs := app.Spec.GetSources()
	if len(srcs) == 0 {
		return invalid("spec.source or spec.sources is required")
	}
	for i, src := range srcs {
		if src.RepoURL == "" {
			return invalid("source %d has no repoURL", i+1)
		}
	}
	d := app.Spec.Destination
	if d.Server == "" && d.Name == "" {
		return invalid("spec.destination needs a server or a name")
	}
	return nil
}

// CheckProject checks that proj permits each of app's sources and its
// destination, in cluster (as ResolveCluster found it).
func CheckProject(app *v1alpha1.Application, proj *v1alpha1.AppProject, cluster clusters.Cluster) error {
	for _, src := range app.Spec.GetSources() {
		if err := project.CheckSource(proj, src.RepoURL); err != nil {
			return opserr.New(ErrInvalid, err)
		}
	}
	d := app.Spec.Destination
	return CheckDestinationNamespace(proj, d, cluster, d.Namespace)
}

// CheckDestinationNamespace checks that proj permits deploying to
// namespace of cluster, which d names.
func CheckDestinationNamespace(proj *v1alpha1.AppProject, d v1alpha1.ApplicationDestination, cluster clusters.Cluster, namespace string) error {
	if err := project.CheckClusterDestination(proj, d.Server, d.Name, namespace, cluster.Server, cluster.Project); err != nil {
		return opserr.New(ErrInvalid, err)
	}
	return nil
}
