package reposerver

import (
	"context"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/skiffcd/skiff/api/v1alpha1"
	"github.com/skiffcd/skiff/internal/source"
	"github.com/skiffcd/skiff/internal/source/helmrepo/helmrepotest"
	"github.com/skiffcd/skiff/internal/testgit"
)

// A chart in git names its dependencies' repositories: a URL anyone with
// commit access chooses. As in Argo CD, the server downloads only from
// repositories the app's project lists in sourceRepos, with their
// credentials, and asks nothing of any other host.
func TestChartDependenciesComeOnlyFromRepositoriesTheProjectPermits(t *testing.T) {
	tests := map[string]struct {
		// sourceRepos of the project; CHARTS and GIT stand for the URLs.
		sourceRepos []string
		noProjects  bool // the server has no project rules (the CLI's)
		username    string
		wantErr     string
	}{
		"a repository outside sourceRepos is never asked": {
			sourceRepos: []string{"GIT"},
			wantErr:     "helm repository CHARTS is not permitted in project 'team'",
		},
		"a repository denied by a pattern is never asked": {
			sourceRepos: []string{"*", "!http://127.0.0.1:*/**", "!http://127.0.0.1:*"},
			wantErr:     "is not permitted in project 'team'",
		},
		"a repository in sourceRepos is used": {
			sourceRepos: []string{"GIT", "CHARTS"},
		},
		"a private repository in sourceRepos is used with its credentials": {
			sourceRepos: []string{"GIT", "CHARTS"},
			username:    "reader",
		},
		"a server without project rules downloads from any repository": {
			noProjects: true,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			password := ""
			if tc.username != "" {
				password = "dep-pass"
			}
			charts := helmrepotest.NewRepo(t, tc.username, password, helmrepotest.Chart{
				Name: "lib", Version: "1.2.0",
				Files: map[string]string{"templates/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: from-lib\n"},
			})
			repo := testgit.New(t)
			repo.Commit(map[string]string{
				"app/Chart.yaml":        "apiVersion: v2\nname: app\nversion: 0.1.0\ndependencies:\n- name: lib\n  version: \"~1.2.0\"\n  repository: " + charts.URL + "\n",
				"app/templates/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: from-app\n",
			})
			replace := strings.NewReplacer("CHARTS", charts.URL, "GIT", repo.URL())
			opts := Options{Credentials: func(_ context.Context, url string) (source.Credentials, error) {
				if url == charts.URL && tc.username != "" {
					return source.Credentials{Username: tc.username, Password: password}, nil
				}
				return source.Credentials{}, nil
			}}
			if !tc.noProjects {
				repos := make([]string, len(tc.sourceRepos))
				for i, r := range tc.sourceRepos {
					repos[i] = replace.Replace(r)
				}
				opts.Projects = func(_ context.Context, name string) (*v1alpha1.AppProject, error) {
					if name != "team" {
						t.Errorf("project %q looked up, want team", name)
					}
					return &v1alpha1.AppProject{ObjectMeta: metav1.ObjectMeta{Name: "team"}, Spec: v1alpha1.AppProjectSpec{SourceRepos: repos}}, nil
				}
			}
			server, _ := newTestServer(t, &fakeClock{now: time.Now()}, opts)
			req := request(repo.URL(), "app")
			req.Project = "team"

			resp, err := server.Manifests(context.Background(), req)
			if tc.wantErr != "" {
				if want := replace.Replace(tc.wantErr); err == nil || !strings.Contains(err.Error(), want) {
					t.Fatalf("Manifests() error = %v, want %q", err, want)
				}
				if n := charts.Requests("/index.yaml") + charts.Requests("/charts/lib-1.2.0.tgz"); n != 0 {
					t.Errorf("%d requests reached the repository the project does not permit", n)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, m := range resp.Manifests {
				names = append(names, m.Object.GetName())
			}
			if strings.Join(names, ",") != "from-lib,from-app" && strings.Join(names, ",") != "from-app,from-lib" {
				t.Errorf("rendered %v, want the app's and its dependency's ConfigMaps", names)
			}
			if charts.Requests("/charts/lib-1.2.0.tgz") != 1 {
				t.Errorf("the dependency was downloaded %d times, want once", charts.Requests("/charts/lib-1.2.0.tgz"))
			}
		})
	}
}
