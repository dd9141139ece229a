package scm

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"

	"github.com/skiffcd/skiff/api/v1alpha1"
	"github.com/skiffcd/skiff/internal/appset"
)

const testToken = "s3cret-t0ken"

// testSecrets serve testToken as Secret scm-token key token.
func testSecrets(name, key string) (string, error) {
	if name == "scm-token" && key == "token" {
		return testToken + "\n", nil
	}
	return "", fmt.Errorf("secrets %q not found", name)
}

// recorder keeps the requests a fake API served.
type recorder struct {
	mu       sync.Mutex
	requests []string
}

func (r *recorder) add(req *http.Request) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.requests = append(r.requests, req.Method+" "+req.URL.RequestURI())
}

func (r *recorder) list() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.requests...)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// fakeGitHub answers as GitHub Enterprise's REST API v3 (under /api/v3/)
// does for organization acme (repositories over two pages: guestbook;
// infra and empty) and its repository shop's pull requests (two pages),
// with the bearer testToken.
func fakeGitHub(t *testing.T) (*httptest.Server, *recorder) {
	rec := &recorder{}
	mux := http.NewServeMux()
	var srv *httptest.Server
	repo := func(name, branch string, topics ...string) map[string]any {
		return map[string]any{
			"name": name, "owner": map[string]any{"login": "acme"}, "default_branch": branch, "topics": topics,
			"ssh_url": "git@github.example.com:acme/" + name + ".git", "clone_url": "https://github.example.com/acme/" + name + ".git",
		}
	}
	branch := func(name, sha string) map[string]any {
		return map[string]any{"name": name, "commit": map[string]any{"sha": sha}}
	}
	notFound := func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusNotFound, map[string]any{"message": "Not Found"})
	}
	mux.HandleFunc("GET /api/v3/orgs/acme/repos", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("page") == "2" {
			writeJSON(w, 200, []any{repo("infra", "master"), repo("empty", "main")})
			return
		}
		w.Header().Set("Link", fmt.Sprintf(`<%s/api/v3/organizations/1/repos?per_page=100&page=2>; rel="next", <%s/api/v3/organizations/1/repos?per_page=100&page=2>; rel="last"`, srv.URL, srv.URL))
		writeJSON(w, 200, []any{repo("guestbook", "main", "team-a", "web")})
	})
	// GitHub's next links name the organization by ID.
	mux.HandleFunc("GET /api/v3/organizations/1/repos", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, 200, []any{repo("infra", "master"), repo("empty", "main")})
	})
	mux.HandleFunc("GET /api/v3/repos/acme/guestbook/branches/main", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, 200, branch("main", "0123456789abcdef"))
	})
	mux.HandleFunc("GET /api/v3/repos/acme/infra/branches/master", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, 200, branch("master", "fedcba9876543210"))
	})
	mux.HandleFunc("GET /api/v3/repos/acme/empty/branches/main", notFound)
	mux.HandleFunc("GET /api/v3/repos/acme/empty/branches", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, 200, []any{})
	})
	mux.HandleFunc("GET /api/v3/repos/acme/infra/branches", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, 200, []any{branch("master", "fedcba9876543210")})
	})
	mux.HandleFunc("GET /api/v3/repos/acme/guestbook/branches", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("page") == "2" {
			writeJSON(w, 200, []any{branch("feature/x_y", "abcdef1")})
			return
		}
		w.Header().Set("Link", fmt.Sprintf(`<%s/api/v3/repositories/7/branches?per_page=100&page=2>; rel="next"`, srv.URL))
		writeJSON(w, 200, []any{branch("main", "0123456789abcdef")})
	})
	mux.HandleFunc("GET /api/v3/repositories/7/branches", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, 200, []any{branch("feature/x_y", "abcdef1")})
	})
	mux.HandleFunc("GET /api/v3/repos/acme/{repo}/contents/{path...}", func(w http.ResponseWriter, r *http.Request) {
		have := map[string]bool{"guestbook@main:apps": true, "guestbook@main:apps/kustomization.yaml": true, "guestbook@feature/x_y:apps": true}
		if !have[r.PathValue("repo")+"@"+r.URL.Query().Get("ref")+":"+r.PathValue("path")] {
			notFound(w, r)
			return
		}
		writeJSON(w, 200, []any{})
	})
	pull := func(n int, head, base, sha, user string, labels ...string) map[string]any {
		var ls []any
		for _, l := range labels {
			ls = append(ls, map[string]any{"name": l, "color": "ffffff"})
		}
		return map[string]any{
			"number": n, "title": fmt.Sprintf("PR %d", n), "state": "open", "labels": ls, "user": map[string]any{"login": user},
			"head": map[string]any{"ref": head, "sha": sha}, "base": map[string]any{"ref": base},
		}
	}
	mux.HandleFunc("GET /api/v3/repos/acme/shop/pulls", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("page") == "2" {
			writeJSON(w, 200, []any{pull(13, "fix/tidy", "release-1.0", "fedcba9876", "bob")})
			return
		}
		w.Header().Set("Link", fmt.Sprintf(`<%s/api/v3/repos/acme/shop/pulls?per_page=100&page=2>; rel="next"`, srv.URL))
		writeJSON(w, 200, []any{pull(12, "feature/cart", "main", "89abcdef01234567", "ann", "preview")})
	})
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec.add(r)
		if r.Header.Get("Authorization") != "Bearer "+testToken {
			writeJSON(w, http.StatusUnauthorized, map[string]any{"message": "Bad credentials"})
			return
		}
		mux.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv, rec
}

// generate runs appset.Generate on spec (YAML) with c for the SCM inputs.
func generate(t *testing.T, c Client, spec string) ([]appset.Params, error) {
	t.Helper()
	var s v1alpha1.ApplicationSetSpec
	if err := yaml.UnmarshalStrict([]byte(spec), &s); err != nil {
		t.Fatalf("reading spec: %v", err)
	}
	ctx := t.Context()
	res, err := appset.Generate(&s, appset.Inputs{
		SCM: func(gen *v1alpha1.SCMProviderGenerator) (appset.SCMProvider, error) { return c.Provider(ctx, gen) },
		PullRequests: func(gen *v1alpha1.PullRequestGenerator) ([]appset.PullRequest, error) {
			return c.PullRequests(ctx, gen)
		},
	})
	if err != nil {
		return nil, err
	}
	var out []appset.Params
	for _, set := range res.Sets {
		out = append(out, set.Params...)
	}
	return out, nil
}

func TestGitHubSCMProvider(t *testing.T) {
	srv, rec := fakeGitHub(t)
	got, err := generate(t, Client{Secrets: testSecrets, Policy: allowing(srv.URL)}, fmt.Sprintf(`
generators:
- scmProvider:
    github: {organization: acme, api: %s, tokenRef: {secretName: scm-token, key: token}}
    cloneProtocol: https`, srv.URL))
	if err != nil {
		t.Fatal(err)
	}
	want := []appset.Params{
		{"organization": "acme", "repository": "guestbook", "url": "https://github.example.com/acme/guestbook.git",
			"branch": "main", "sha": "0123456789abcdef", "short_sha": "01234567", "short_sha_7": "0123456",
			"labels": "team-a,web", "branchNormalized": "main"},
		{"organization": "acme", "repository": "infra", "url": "https://github.example.com/acme/infra.git",
			"branch": "master", "sha": "fedcba9876543210", "short_sha": "fedcba98", "short_sha_7": "fedcba9",
			"labels": "", "branchNormalized": "master"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("parameters differ (-want +got):\n%s", diff)
	}
	wantRequests := []string{
		"GET /api/v3/orgs/acme/repos?per_page=100",
		"GET /api/v3/organizations/1/repos?per_page=100&page=2",
		"GET /api/v3/repos/acme/guestbook/branches/main",
		"GET /api/v3/repos/acme/infra/branches/master",
		"GET /api/v3/repos/acme/empty/branches/main",
	}
	if diff := cmp.Diff(wantRequests, rec.list()); diff != "" {
		t.Errorf("requests differ (-want +got):\n%s", diff)
	}
}

func TestGitHubAllBranchesAndPaths(t *testing.T) {
	srv, _ := fakeGitHub(t)
	got, err := generate(t, Client{Secrets: testSecrets, Policy: allowing(srv.URL)}, fmt.Sprintf(`
generators:
- scmProvider:
    github: {organization: acme, api: %s/api/v3/, allBranches: true, tokenRef: {secretName: scm-token, key: token}}
    filters:
    - {repositoryMatch: guestbook, pathsExist: [apps/], pathsDoNotExist: [apps/kustomization.yaml]}`, srv.URL))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0]["branch"] != "feature/x_y" || got[0]["sha"] != "abcdef1" || got[0]["url"] != "git@github.example.com:acme/guestbook.git" {
		t.Errorf("sets %v, want guestbook's feature/x_y alone, by SSH", got)
	}
}

func TestGitHubPullRequests(t *testing.T) {
	srv, rec := fakeGitHub(t)
	got, err := generate(t, Client{Secrets: testSecrets, Policy: allowing(srv.URL)}, fmt.Sprintf(`
goTemplate: true
generators:
- pullRequest:
    github: {owner: acme, repo: shop, api: %s, tokenRef: {secretName: scm-token, key: token}}`, srv.URL))
	if err != nil {
		t.Fatal(err)
	}
	want := []appset.Params{
		{"number": "12", "title": "PR 12", "branch": "feature/cart", "branch_slug": "feature-cart", "target_branch": "main",
			"target_branch_slug": "main", "head_sha": "89abcdef01234567", "head_short_sha": "89abcdef", "head_short_sha_7": "89abcde",
			"author": "ann", "labels": []any{"preview"}},
		{"number": "13", "title": "PR 13", "branch": "fix/tidy", "branch_slug": "fix-tidy", "target_branch": "release-1.0",
			"target_branch_slug": "release-1-0", "head_sha": "fedcba9876", "head_short_sha": "fedcba98", "head_short_sha_7": "fedcba9",
			"author": "bob", "labels": []any{}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("parameters differ (-want +got):\n%s", diff)
	}
	if n := len(rec.list()); n != 2 {
		t.Errorf("%d requests, want the two pages: %v", n, rec.list())
	}
}

func TestGitHubAPI(t *testing.T) {
	tests := map[string]struct{ api, want string }{
		"no api is github.com's":                      {"", "https://api.github.com/"},
		"an Enterprise host gets /api/v3/":            {"https://git.example.com", "https://git.example.com/api/v3/"},
		"an Enterprise URL with /api/v3 is kept":      {"https://git.example.com/api/v3", "https://git.example.com/api/v3/"},
		"an API host (GitHub Enterprise Cloud) stays": {"https://api.acme.ghe.com", "https://api.acme.ghe.com/"},
		"a path prefix is kept before /api/v3/":       {"https://example.com/github/", "https://example.com/github/api/v3/"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := githubAPI(tc.api); got != tc.want {
				t.Errorf("githubAPI(%q) = %q, want %q", tc.api, got, tc.want)
			}
		})
	}
}

// allowing is a Policy allowing the fake API at url.
func allowing(url string) Policy { return Policy{AllowedAPIs: []string{url}} }
