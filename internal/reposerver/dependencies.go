package reposerver

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/skiffcd/skiff/api/v1alpha1"
	"github.com/skiffcd/skiff/internal/project"
	"github.com/skiffcd/skiff/internal/render"
	"github.com/skiffcd/skiff/internal/source"
)

// dependencyFetcher downloads the chart dependencies of an app of
// projectName, as Argo CD does: only from repositories the project's
// sourceRepos permit, with the repository's credentials. The check comes
// before any request, so a chart in git cannot make the server call an
// arbitrary host.
func (s *Server) dependencyFetcher(projectName string) render.DependencyFetcher {
	return func(ctx context.Context, repoURL, chart, version string) (string, error) {
		if err := s.permitDependency(ctx, projectName, repoURL); err != nil {
			return "", err
		}
		creds, err := s.credentials(ctx, repoURL)
		if err != nil {
			return "", render.Unavailable(err)
		}
		dir, _, err := s.helm.Fetch(ctx, repoURL, chart, version, helmCredentials(creds))
		if err != nil {
			// Most download failures pass (a server down, a network
			// timeout); the index cache makes a retry cheap.
			return "", render.Unavailable(err)
		}
		return dir, nil
	}
}

func (s *Server) permitDependency(ctx context.Context, projectName, repoURL string) error {
	if s.opts.Projects == nil {
		return nil
	}
	proj, err := s.opts.Projects(ctx, projectName)
	if err != nil {
		return render.Unavailable(fmt.Errorf("reading the project: %w", err))
	}
	if err := project.CheckSource(proj, repoURL); err != nil {
		return &dependencyNotPermitted{repo: source.Redact(repoURL), project: proj.Name}
	}
	return nil
}

// dependencyNotPermitted is a dependency repository outside the project's
// sourceRepos; errors.Is matches it to project.ErrNotPermitted.
type dependencyNotPermitted struct{ repo, project string }

func (e *dependencyNotPermitted) Error() string {
	return fmt.Sprintf("helm repository %s is not permitted in project '%s' (add it to the project's sourceRepos)", e.repo, e.project)
}

func (e *dependencyNotPermitted) Is(target error) bool { return target == project.ErrNotPermitted }

// CachedProjects reads AppProjects from reader (normally the manager's
// cache) in namespace, as the Application controller does: "" means the
// default project, which Argo CD creates when missing and which permits
// every repository.
func CachedProjects(reader client.Reader, namespace string) ProjectFunc {
	return func(ctx context.Context, name string) (*v1alpha1.AppProject, error) {
		if name == "" {
			name = v1alpha1.DefaultProjectName
		}
		proj := &v1alpha1.AppProject{}
		err := reader.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, proj)
		if apierrors.IsNotFound(err) && name == v1alpha1.DefaultProjectName {
			return project.Default(namespace), nil
		}
		if err != nil {
			return nil, fmt.Errorf("project %s: %w", name, err)
		}
		return proj, nil
	}
}
