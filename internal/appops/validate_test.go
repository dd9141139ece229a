package appops

import (
	"context"
	"errors"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/skiffcd/skiff/api/v1alpha1"
	"github.com/skiffcd/skiff/internal/clusters"
	"github.com/skiffcd/skiff/internal/project"
)

// validApp is an app every check accepts with the default project.
func validApp() *v1alpha1.Application {
	app := &v1alpha1.Application{Spec: v1alpha1.ApplicationSpec{
		Source:      &v1alpha1.ApplicationSource{RepoURL: "https://github.com/org/repo", Path: "app"},
		Destination: v1alpha1.ApplicationDestination{Server: project.InClusterServer, Namespace: "shop"},
	}}
	app.Name = "shop"
	return app
}

func TestCheckSpec(t *testing.T) {
	tests := map[string]struct {
		change  func(*v1alpha1.Application)
		wantErr string
	}{
		"an app with a source and the local cluster by server is valid": {},
		"several sources are valid": {
			change: func(a *v1alpha1.Application) {
				a.Spec.Sources, a.Spec.Source = []v1alpha1.ApplicationSource{*a.Spec.Source, *a.Spec.Source}, nil
			},
		},
		"a name the API server refuses": {
			change: func(a *v1alpha1.Application) { a.Name = "Not_A_Name" }, wantErr: `metadata.name "Not_A_Name"`,
		},
		"no source": {
			change: func(a *v1alpha1.Application) { a.Spec.Source = nil }, wantErr: "spec.source or spec.sources is required",
		},
		"a source without a repository": {
			change: func(a *v1alpha1.Application) {
				a.Spec.Sources, a.Spec.Source = []v1alpha1.ApplicationSource{*a.Spec.Source, {Path: "x"}}, nil
			},
			wantErr: "source 2 has no repoURL",
		},
		"no destination cluster": {
			change: func(a *v1alpha1.Application) { a.Spec.Destination.Server = "" }, wantErr: "spec.destination needs a server or a name",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			app := validApp()
			if tc.change != nil {
				tc.change(app)
			}
			wantKind(t, CheckSpec(app), ErrInvalid, tc.wantErr)
		})
	}
}

func TestResolveCluster(t *testing.T) {
	east := clusters.Cluster{Name: "east", Server: "https://east.example:6443"}
	tests := map[string]struct {
		change  func(*v1alpha1.Application)
		reg     clusters.Registry
		want    string
		wantErr string
	}{
		"the local cluster by server is the in-cluster entry": {want: clusters.InClusterName},
		"the local cluster's server may end in a slash": {
			change: func(a *v1alpha1.Application) { a.Spec.Destination.Server += "/" }, want: clusters.InClusterName,
		},
		"the local cluster may be named instead": {
			change: func(a *v1alpha1.Application) {
				a.Spec.Destination = v1alpha1.ApplicationDestination{Name: "in-cluster", Namespace: "shop"}
			},
			want: clusters.InClusterName,
		},
		"a registered cluster is found by name": {
			change: func(a *v1alpha1.Application) { a.Spec.Destination = v1alpha1.ApplicationDestination{Name: "east"} },
			reg:    clusters.NewStatic(east), want: "east",
		},
		"a registered cluster is found by server": {
			change: func(a *v1alpha1.Application) { a.Spec.Destination.Server = east.Server },
			reg:    clusters.NewStatic(east), want: "east",
		},
		"another cluster's server": {
			change:  func(a *v1alpha1.Application) { a.Spec.Destination.Server = "https://10.0.0.1:6443" },
			wantErr: `cluster "https://10.0.0.1:6443" is not configured`,
		},
		"another cluster's name": {
			change: func(a *v1alpha1.Application) { a.Spec.Destination = v1alpha1.ApplicationDestination{Name: "prod"} }, wantErr: `cluster "prod" is not configured`,
		},
		"the local server with another cluster's name": {
			change:  func(a *v1alpha1.Application) { a.Spec.Destination.Name = "prod" },
			wantErr: `is cluster "in-cluster", not "prod"`,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			app := validApp()
			if tc.change != nil {
				tc.change(app)
			}
			got, err := ResolveCluster(app.Spec.Destination, tc.reg)
			wantKind(t, err, ErrInvalid, tc.wantErr)
			if got.Name != tc.want {
				t.Errorf("ResolveCluster() = %q, want %q", got.Name, tc.want)
			}
		})
	}
}

func TestCheckProject(t *testing.T) {
	team := &v1alpha1.AppProject{Spec: v1alpha1.AppProjectSpec{
		SourceRepos:  []string{"https://github.com/org/*"},
		Destinations: []v1alpha1.ApplicationDestination{{Server: project.InClusterServer, Namespace: "team-*"}},
	}}
	team.Name = "team"
	tests := map[string]struct {
		change  func(*v1alpha1.Application)
		wantErr string
	}{
		"a permitted repository and namespace": {
			change: func(a *v1alpha1.Application) { a.Spec.Destination.Namespace = "team-a" },
		},
		"a repository the project does not permit": {
			change: func(a *v1alpha1.Application) {
				a.Spec.Destination.Namespace = "team-a"
				a.Spec.Source.RepoURL = "https://gitlab.com/other/repo"
			},
			wantErr: "not permitted in project",
		},
		"a namespace outside the project's destinations": {
			wantErr: "do not match any of the allowed destinations",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			app := validApp()
			app.Spec.Project = "team"
			if tc.change != nil {
				tc.change(app)
			}
			err := CheckProject(app, team, clusters.InCluster())
			wantKind(t, err, ErrInvalid, tc.wantErr)
			if err != nil && !errors.Is(err, project.ErrNotPermitted) {
				t.Errorf("%v is not project.ErrNotPermitted", err)
			}
		})
	}
}

func TestValidate(t *testing.T) {
	notFound := apierrors.NewNotFound(schema.GroupResource{Group: "argoproj.io", Resource: "appprojects"}, "team")
	unavailable := errors.New("the API server is unavailable")
	tests := map[string]struct {
		project   string
		read      error
		wantAsked string
		wantKind  error
		wantErr   string
	}{
		"an app without a project is checked against the default one": {wantAsked: "default"},
		"an app in a project that does not exist is invalid": {
			project: "team", read: notFound, wantAsked: "team", wantKind: ErrInvalid,
			wantErr: "application references project team which does not exist",
		},
		"a project that cannot be read is no verdict on the app": {
			project: "team", read: unavailable, wantAsked: "team", wantErr: "the API server is unavailable",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			app := validApp()
			app.Spec.Project = tc.project
			asked := ""
			proj, _, err := Validate(context.Background(), app, func(_ context.Context, name string) (*v1alpha1.AppProject, error) {
				asked = name
				if tc.read != nil {
					return nil, tc.read
				}
				return project.Default("argocd"), nil
			}, nil)
			if asked != tc.wantAsked {
				t.Errorf("asked for project %q, want %q", asked, tc.wantAsked)
			}
			if tc.wantErr == "" {
				if err != nil || proj == nil || proj.Name != "default" {
					t.Fatalf("got %v, %v; want the default project", proj, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("got %v, want an error with %q", err, tc.wantErr)
			}
			if isInvalid := errors.Is(err, ErrInvalid); isInvalid != (tc.wantKind == ErrInvalid) {
				t.Errorf("errors.Is(%v, ErrInvalid) = %v", err, isInvalid)
			}
		})
	}
	app := validApp()
	app.Spec.Source = nil
	if _, _, err := Validate(context.Background(), app, func(context.Context, string) (*v1alpha1.AppProject, error) {
		t.Error("the project was read for an app whose spec is invalid")
		return nil, nil
	}, nil); !errors.Is(err, ErrInvalid) {
		t.Errorf("got %v, want ErrInvalid", err)
	}
}

// wantKind fails unless err is nil when want is empty, else of kind with
// a message containing want.
func wantKind(t *testing.T, err, kind error, want string) {
	t.Helper()
	if want == "" {
		if err != nil {
			t.Fatalf("got %v, want no error", err)
		}
		return
	}
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("got %v, want an error with %q", err, want)
	}
	if !errors.Is(err, kind) {
		t.Errorf("errors.Is(%v, %v) is false", err, kind)
	}
}
