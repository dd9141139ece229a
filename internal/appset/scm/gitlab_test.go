package scm

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/skiffcd/skiff/api/v1alpha1"
	"github.com/skiffcd/skiff/internal/appset"
)

// fakeGitLab answers as GitLab's API v4 does for group acme/platform
// (projects over two pages: guestbook; empty, without a default branch)
// and project acme/platform/shop's merge requests, with the private
// testToken.
func fakeGitLab(t *testing.T, tls bool) (*httptest.Server, *recorder) {
	rec := &recorder{}
	mux := http.NewServeMux()
	notFound := func(w http.ResponseWriter, what string) {
		writeJSON(w, http.StatusNotFound, map[string]any{"message": "404 " + what + " Not Found"})
	}
	project := func(id int, path string, branch any) map[string]any {
		return map[string]any{
			"id": id, "path": path, "namespace": map[string]any{"full_path": "acme/platform"}, "default_branch": branch,
			"ssh_url_to_repo":  "git@gitlab.example.com:acme/platform/" + path + ".git",
			"http_url_to_repo": "https://gitlab.example.com/acme/platform/" + path + ".git",
			"topics":           []any{}, "tag_list": []any{"legacy"},
		}
	}
	mux.HandleFunc("GET /api/v4/groups/{group}/projects", func(w http.ResponseWriter, r *http.Request) {
		if r.PathValue("group") != "acme/platform" {
			notFound(w, "Group")
			return
		}
		if r.URL.Query().Get("page") == "2" {
			w.Header().Set("X-Next-Page", "")
			writeJSON(w, 200, []any{project(9, "empty", nil)})
			return
		}
		w.Header().Set("X-Next-Page", "2")
		writeJSON(w, 200, []any{project(7, "guestbook", "main")})
	})
	mux.HandleFunc("GET /api/v4/projects/7/repository/branches/main", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, 200, map[string]any{"name": "main", "commit": map[string]any{"id": "0123456789abcdef"}})
	})
	mux.HandleFunc("HEAD /api/v4/projects/7/repository/files/{path}", func(w http.ResponseWriter, r *http.Request) {
		if r.PathValue("path") != "apps/kustomization.yaml" || r.URL.Query().Get("ref") != "main" {
			w.WriteHeader(http.StatusNotFound)
			return
		}
		w.Header().Set("X-Gitlab-File-Path", r.PathValue("path"))
	})
	mux.HandleFunc("GET /api/v4/projects/7/repository/tree", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("path") != "apps" || r.URL.Query().Get("ref") != "main" {
			notFound(w, "Tree")
			return
		}
		writeJSON(w, 200, []any{map[string]any{"path": "apps/kustomization.yaml", "type": "blob"}})
	})
	mux.HandleFunc("GET /api/v4/projects/{project}/merge_requests", func(w http.ResponseWriter, r *http.Request) {
		if r.PathValue("project") != "acme/platform/shop" {
			notFound(w, "Project")
			return
		}
		writeJSON(w, 200, []any{map[string]any{
			"iid": 4, "id": 1234, "title": "Cart", "source_branch": "feature/cart", "target_branch": "main",
			"sha": "89abcdef01234567", "labels": []any{"preview"}, "author": map[string]any{"username": "ann"},
		}})
	})
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec.add(r)
		if r.Header.Get("PRIVATE-TOKEN") != testToken {
			writeJSON(w, http.StatusUnauthorized, map[string]any{"message": "401 Unauthorized"})
			return
		}
		mux.ServeHTTP(w, r)
	})
	srv := httptest.NewUnstartedServer(handler)
	if tls {
		srv.StartTLS()
	} else {
		srv.Start()
	}
	t.Cleanup(srv.Close)
	return srv, rec
}

func TestGitLabSCMProvider(t *testing.T) {
	srv, rec := fakeGitLab(t, false)
	got, err := generate(t, Client{Secrets: testSecrets, Policy: allowing(srv.URL)}, fmt.Sprintf(`
generators:
- scmProvider:
    gitlab: {group: acme/platform, api: %s, includeSubgroups: true, topic: web, tokenRef: {secretName: scm-token, key: token}}
    filters: [{pathsExist: [apps, apps/kustomization.yaml]}]`, srv.URL))
	if err != nil {
		t.Fatal(err)
	}
	want := []appset.Params{{
		"organization": "acme/platform", "repository": "guestbook", "url": "git@gitlab.example.com:acme/platform/guestbook.git",
		"branch": "main", "sha": "0123456789abcdef", "short_sha": "01234567", "short_sha_7": "0123456",
		"labels": "legacy", "branchNormalized": "main",
	}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("parameters differ (-want +got):\n%s", diff)
	}
	wantRequests := []string{
		"GET /api/v4/groups/acme%2Fplatform/projects?include_subgroups=true&per_page=100&topic=web&with_shared=true",
		"GET /api/v4/groups/acme%2Fplatform/projects?include_subgroups=true&page=2&per_page=100&topic=web&with_shared=true",
		"GET /api/v4/projects/7/repository/branches/main",
		"HEAD /api/v4/projects/7/repository/files/apps?ref=main",
		"GET /api/v4/projects/7/repository/tree?path=apps&per_page=1&ref=main",
		"HEAD /api/v4/projects/7/repository/files/apps%2Fkustomization.yaml?ref=main",
	}
	if diff := cmp.Diff(wantRequests, rec.list()); diff != "" {
		t.Errorf("requests differ (-want +got):\n%s", diff)
	}
}

func TestGitLabMergeRequests(t *testing.T) {
	srv, rec := fakeGitLab(t, false)
	got, err := Client{Secrets: testSecrets, Policy: allowing(srv.URL)}.PullRequests(t.Context(), &v1alpha1.PullRequestGenerator{GitLab: &v1alpha1.PullRequestGeneratorGitLab{
		Project: "acme/platform/shop", API: srv.URL + "/", Labels: []string{"preview", "team-a"}, PullRequestState: "opened",
		TokenRef: &v1alpha1.SecretRef{SecretName: "scm-token", Key: "token"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	want := []appset.PullRequest{{
		Number: 4, Title: "Cart", Branch: "feature/cart", TargetBranch: "main", HeadSHA: "89abcdef01234567",
		Labels: []string{"preview"}, Author: "ann",
	}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("merge requests differ (-want +got):\n%s", diff)
	}
	wantRequests := []string{"GET /api/v4/projects/acme%2Fplatform%2Fshop/merge_requests?labels=preview%2Cteam-a&per_page=100&state=opened"}
	if diff := cmp.Diff(wantRequests, rec.list()); diff != "" {
		t.Errorf("requests differ (-want +got):\n%s", diff)
	}
}

func TestGitLabInsecure(t *testing.T) {
	srv, _ := fakeGitLab(t, true)
	gen := func(insecure bool) *v1alpha1.PullRequestGenerator {
		return &v1alpha1.PullRequestGenerator{GitLab: &v1alpha1.PullRequestGeneratorGitLab{
			Project: "acme/platform/shop", API: srv.URL, Insecure: insecure,
			TokenRef: &v1alpha1.SecretRef{SecretName: "scm-token", Key: "token"},
		}}
	}
	c := Client{Secrets: testSecrets, Policy: allowing(srv.URL)}
	if _, err := c.PullRequests(t.Context(), gen(false)); err == nil {
		t.Error("a self-signed certificate was trusted without insecure")
	}
	if _, err := c.PullRequests(t.Context(), gen(true)); err != nil {
		t.Errorf("insecure: %v", err)
	}
}

func TestAPIBase(t *testing.T) {
	tests := map[string]struct{ api, want string }{
		"no api is gitlab.com's":              {"", "https://gitlab.com/api/v4/"},
		"a host gets /api/v4/":                {"https://gitlab.example.com", "https://gitlab.example.com/api/v4/"},
		"a URL with /api/v4/ is kept":         {"https://gitlab.example.com/api/v4/", "https://gitlab.example.com/api/v4/"},
		"a path prefix is kept before api/v4": {"https://example.com/gitlab", "https://example.com/gitlab/api/v4/"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := apiBase(tc.api, "api/v4/", "https://gitlab.com/api/v4/"); got != tc.want {
				t.Errorf("apiBase(%q) = %q, want %q", tc.api, got, tc.want)
			}
		})
	}
}
