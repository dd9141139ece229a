package reposerver

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/skiffcd/skiff/api/v1alpha1"
	"github.com/skiffcd/skiff/internal/render"
	"github.com/skiffcd/skiff/internal/testgit"
)

// valuesServer serves value files from 127.0.0.1 over http: /values.yaml
// whatever set last put there, /big over the render's file limit,
// /elsewhere redirecting to https, and 404 for the rest. gets counts the requests.
type valuesServer struct {
	*httptest.Server
	mu     sync.Mutex
	values string
	gets   atomic.Int64
}

func newValuesServer(t *testing.T) *valuesServer {
	v := &valuesServer{values: "env: one\n"}
	v.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		v.gets.Add(1)
		switch r.URL.Path {
		case "/values.yaml":
			v.mu.Lock()
			defer v.mu.Unlock()
			_, _ = w.Write([]byte(v.values))
		case "/elsewhere":
			http.Redirect(w, r, "https://values.example.invalid/values.yaml", http.StatusFound)
		case "/big":
			_, _ = w.Write([]byte("env: " + strings.Repeat("x", 2048) + "\n"))
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(v.Close)
	return v
}

func (v *valuesServer) set(values string) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.values = values
}

// chartRequest is an app of the chart in repo's "chart" directory with
// valueFiles.
func chartRequest(repo *testgit.Repo, helm *v1alpha1.ApplicationSourceHelm) Request {
	return Request{AppName: "shop", Namespace: "default", Sources: []v1alpha1.ApplicationSource{{
		RepoURL: repo.URL(), Path: "chart", TargetRevision: "HEAD", Helm: helm,
	}}}
}

func chartRepo(t *testing.T) *testgit.Repo {
	repo := testgit.New(t)
	repo.Commit(map[string]string{
		"chart/Chart.yaml":        "apiVersion: v2\nname: shop\nversion: 0.1.0\n",
		"chart/values.yaml":       "env: default\n",
		"chart/templates/cm.yaml": chartTemplate,
	})
	return repo
}

func renderedEnv(t *testing.T, resp *Response) string {
	t.Helper()
	if len(resp.Manifests) != 1 {
		t.Fatalf("got %d objects, want 1", len(resp.Manifests))
	}
	env, _, _ := unstructured.NestedString(resp.Manifests[0].Object.Object, "data", "env")
	return env
}

// A value file given by an http URL is fetched when helm.valuesFileSchemes
// lists http: it renders, its content is trusted for the revision TTL (no
// fetch, no render), and once the TTL has passed a changed file renders
// again under another key. Without http in the setting, live, the same
// app is refused with the setting named and nothing fetched.
func TestValueFilesByURLAreFetchedWhenTheSettingAllowsTheirScheme(t *testing.T) {
	ctx := context.Background()
	values := newValuesServer(t)
	var schemes atomic.Value
	schemes.Store([]string{"http", "https"})
	clock := &fakeClock{now: time.Now()}
	server, _ := newTestServer(t, clock, Options{RevisionTTL: time.Minute,
		ValuesFileSchemes: func() []string { return schemes.Load().([]string) }})
	req := chartRequest(chartRepo(t), &v1alpha1.ApplicationSourceHelm{ValueFiles: []string{values.URL + "/values.yaml"}})

	first, err := server.Manifests(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if env := renderedEnv(t, first); env != "one" {
		t.Errorf("env = %q, want one from the fetched file", env)
	}
	second, err := server.Manifests(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if !second.CacheHit || values.gets.Load() != 1 {
		t.Errorf("within the TTL: hit=%v, %d fetches; want a hit and 1 fetch", second.CacheHit, values.gets.Load())
	}

	values.set("env: two\n")
	clock.Advance(2 * time.Minute)
	third, err := server.Manifests(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if env := renderedEnv(t, third); third.CacheHit || third.Key == first.Key || env != "two" {
		t.Errorf("after the TTL with a changed file: hit=%v, same key=%v, env=%q; want a new render with env two", third.CacheHit, third.Key == first.Key, env)
	}

	schemes.Store([]string{"https"})
	fetched := values.gets.Load()
	_, err = server.Manifests(ctx, req)
	want := `value file "` + values.URL + `/values.yaml": the scheme http is not allowed: argocd-cm's helm.valuesFileSchemes allows https`
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("with https only: %v, want an error containing %q", err, want)
	}
	if values.gets.Load() != fetched {
		t.Error("a value file of a scheme not allowed was fetched")
	}
}

// Value files by URL that cannot be used are clear errors: a 404 (skipped
// with ignoreMissingValueFiles), a file over the render's file limit, a
// redirect to a scheme not allowed, and http with the default setting.
func TestValueFilesByURLThatCannotBeUsed(t *testing.T) {
	values := newValuesServer(t)
	repo := chartRepo(t)
	httpAllowed := func() []string { return []string{"http"} }
	tests := map[string]struct {
		file          string
		ignoreMissing bool
		schemes       func() []string
		wantErr       string
		wantEnv       string
	}{
		"a missing file is an error":                             {file: "/missing.yaml", schemes: httpAllowed, wantErr: "/missing.yaml\": not found (404)"},
		"a missing file is skipped with ignoreMissingValueFiles": {file: "/missing.yaml", schemes: httpAllowed, ignoreMissing: true, wantEnv: "default"},
		"a file over the file limit is refused":                  {file: "/big", schemes: httpAllowed, wantErr: "/big\": larger than 1024 bytes"},
		"a redirect to a scheme not allowed is refused": {file: "/elsewhere", schemes: httpAllowed,
			wantErr: "the scheme https is not allowed: argocd-cm's helm.valuesFileSchemes allows http"},
		"http is refused by default": {file: "/values.yaml", wantErr: "the scheme http is not allowed: argocd-cm's helm.valuesFileSchemes allows https"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			clock := &fakeClock{now: time.Now()}
			server, _ := newTestServer(t, clock, Options{ValuesFileSchemes: tc.schemes,
				Limits: render.Limits{MaxFileBytes: 1024}})
			resp, err := server.Manifests(context.Background(), chartRequest(repo, &v1alpha1.ApplicationSourceHelm{
				ValueFiles: []string{values.URL + tc.file}, IgnoreMissingValueFiles: tc.ignoreMissing}))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if env := renderedEnv(t, resp); env != tc.wantEnv {
				t.Errorf("env = %q, want %q", env, tc.wantEnv)
			}
		})
	}
}
