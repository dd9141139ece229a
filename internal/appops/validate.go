package appops

import (
	"cmp"
	"context"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/skiffcd/skiff/api/v1alpha1"
	"github.com/skiffcd/skiff/internal/opserr"
	"github.com/skiffcd/skiff/internal/project"
	"github.com/skiffcd/skiff/internal/reposerver"
)

// Validate checks that Skiff can act on app: its spec (CheckSpec), that
// its project exists and that the project permits its sources and
// destination (CheckProject). projects reads the project: an error for
// which apierrors.IsNotFound holds means it does not exist
// (reposerver.CachedProjects; the controller's also creates the default
// project). It returns the project. The controller
// checks every comparison and sync with it, the API server and the CLI
// every app they write, so that all refuse the same apps, with the same
// messages (ErrInvalid).
func Validate(ctx context.Context, app *v1alpha1.Application, projects reposerver.ProjectFunc) (*v1alpha1.AppProject, error) {
	if err := CheckSpec(app); err != nil {
		return nil, err
	}
	name := app.ProjectName()
	proj, err := projects(ctx, name)
	switch {
	case apierrors.IsNotFound(err):
		return nil, invalid("application references project %s which does not exist", name)
	case err != nil:
		return nil, err
	}
	if err := CheckProject(app, proj); err != nil {
		return nil, err
	}
	return proj, nil
}

// CheckSpec checks what an app must have whatever its project: a name the
// API server takes, sources with a repository each, and a destination in
// the cluster Skiff runs against (by server or name).
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
	if !IsLocal(d) {
		return invalid("cluster %q is not configured: Skiff manages the cluster it runs against (%s, %s)",
			cmp.Or(d.Server, d.Name), project.InClusterServer, project.InClusterName)
	}
	return nil
}

// CheckProject checks that proj permits each of app's sources and its
// destination.
func CheckProject(app *v1alpha1.Application, proj *v1alpha1.AppProject) error {
	for _, src := range app.Spec.GetSources() {
		if err := project.CheckSource(proj, src.RepoURL); err != nil {
			return opserr.New(ErrInvalid, err)
		}
	}
	d := app.Spec.Destination
	if err := project.CheckDestination(proj, d.Server, d.Name, d.Namespace); err != nil {
		return opserr.New(ErrInvalid, err)
	}
	return nil
}

// IsLocal reports whether d is the cluster Skiff runs against: its API
// server address (a trailing slash aside), its name, or both.
func IsLocal(d v1alpha1.ApplicationDestination) bool {
	return (d.Server == "" || strings.TrimSuffix(d.Server, "/") == project.InClusterServer) &&
		(d.Name == "" || d.Name == project.InClusterName) && (d.Server != "" || d.Name != "")
}
