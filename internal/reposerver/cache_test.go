package reposerver

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/skiffcd/skiff/api/v1alpha1"
	"github.com/skiffcd/skiff/internal/source"
	"github.com/skiffcd/skiff/internal/source/helmrepo"
	"github.com/skiffcd/skiff/internal/testgit"
)

func newTestServer(t *testing.T, clock *fakeClock, opts Options) (*Server, *source.Cache) {
	t.Helper()
	dir := t.TempDir()
	git := source.NewCache(filepath.Join(dir, "repos"), source.Options{})
	opts.Now = clock.Now
	return New(git, helmrepo.New(filepath.Join(dir, "charts"), nil), opts), git
}

func request(repoURL, path string) Request {
	return Request{AppName: "guestbook", Namespace: "default", Sources: []v1alpha1.ApplicationSource{{
		RepoURL: repoURL, Path: path, TargetRevision: "HEAD",
	}}}
}

// The steady state of a GitOps loop is an unchanged repository compared over
// and over: that must cost neither git network calls nor renders.
func TestSecondRenderOfTheSameCommitMakesNoGitCallAndNoRender(t *testing.T) {
	ctx := context.Background()
	repo := testgit.New(t)
	sha := repo.Commit(map[string]string{"app/cm.yaml": configMapYAML})
	clock := &fakeClock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	server, git := newTestServer(t, clock, Options{RevisionTTL: time.Minute})

	first, err := server.Manifests(ctx, request(repo.URL(), "app"))
	if err != nil {
		t.Fatal(err)
	}
	if first.CacheHit || len(first.Manifests) != 1 || first.Revisions[0] != sha {
		t.Fatalf("first render: hit=%v objects=%d revision=%v, want a miss with 1 object at %s", first.CacheHit, len(first.Manifests), first.Revisions, sha)
	}
	before := git.Stats()

	second, err := server.Manifests(ctx, request(repo.URL(), "app"))
	if err != nil {
		t.Fatal(err)
	}
	after := git.Stats()
	if !second.CacheHit {
		t.Errorf("second render of the same commit rendered again")
	}
	if after != before {
		t.Errorf("second render made git calls: before %+v, after %+v", before, after)
	}

	// Past the revision TTL, one ls-remote confirms nothing moved: still no
	// fetch and no render.
	clock.Advance(2 * time.Minute)
	third, err := server.Manifests(ctx, request(repo.URL(), "app"))
	if err != nil {
		t.Fatal(err)
	}
	st := git.Stats()
	if !third.CacheHit || st.LsRemotes != after.LsRemotes+1 || st.Fetches != after.Fetches {
		t.Errorf("after the TTL: hit=%v, ls-remotes %d→%d, fetches %d→%d; want a hit, one ls-remote, no fetch",
			third.CacheHit, after.LsRemotes, st.LsRemotes, after.Fetches, st.Fetches)
	}
}

func TestNewCommitIsSeenAfterTheTTLOrAtOnceOnHardRefresh(t *testing.T) {
	ctx := context.Background()
	repo := testgit.New(t)
	repo.Commit(map[string]string{"app/cm.yaml": configMapYAML})
	clock := &fakeClock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	server, _ := newTestServer(t, clock, Options{RevisionTTL: time.Minute})
	if _, err := server.Manifests(ctx, request(repo.URL(), "app")); err != nil {
		t.Fatal(err)
	}
	newSHA := repo.Commit(map[string]string{"app/cm2.yaml": strings.ReplaceAll(configMapYAML, "settings", "more")})

	cached, err := server.Manifests(ctx, request(repo.URL(), "app"))
	if err != nil {
		t.Fatal(err)
	}
	if len(cached.Manifests) != 1 {
		t.Errorf("within the TTL the old commit is served: got %d objects, want 1", len(cached.Manifests))
	}

	hard := request(repo.URL(), "app")
	hard.Hard = true
	fresh, err := server.Manifests(ctx, hard)
	if err != nil {
		t.Fatal(err)
	}
	if fresh.CacheHit || fresh.Revisions[0] != newSHA || len(fresh.Manifests) != 2 {
		t.Errorf("hard refresh: hit=%v revision=%v objects=%d; want a render of %s with 2 objects", fresh.CacheHit, fresh.Revisions, len(fresh.Manifests), newSHA)
	}
}

func TestRenderErrorsNameTheSourceAndAreNotCached(t *testing.T) {
	ctx := context.Background()
	repo := testgit.New(t)
	repo.Commit(map[string]string{"app/bad.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: [not, a, map]\n"})
	clock := &fakeClock{now: time.Now()}
	server, _ := newTestServer(t, clock, Options{})
	for range 2 {
		_, err := server.Manifests(ctx, request(repo.URL(), "app"))
		if err == nil {
			t.Fatal("a broken manifest rendered without error")
		}
		if !strings.Contains(err.Error(), "source 1") || !strings.Contains(err.Error(), "bad.yaml") {
			t.Errorf("error does not name the source and file: %v", err)
		}
	}
}

func TestManifestCacheStaysWithinItsByteBudget(t *testing.T) {
	repo := testgit.New(t)
	repo.Commit(map[string]string{"app/cm.yaml": configMapYAML})
	clock := &fakeClock{now: time.Now()}
	server, _ := newTestServer(t, clock, Options{})
	resp, err := server.Manifests(context.Background(), request(repo.URL(), "app"))
	if err != nil {
		t.Fatal(err)
	}
	size := estimateSize(resp.Manifests)

	c := newManifestCache(3 * size)
	for _, key := range []string{"a", "b", "c", "d"} {
		c.put(key, resp.Manifests)
	}
	if c.bytes > c.maxBytes {
		t.Errorf("cache holds %d bytes, budget %d", c.bytes, c.maxBytes)
	}
	if _, ok := c.get("a"); ok {
		t.Errorf("the least recently used entry was kept")
	}
	if _, ok := c.get("d"); !ok {
		t.Errorf("the newest entry was evicted")
	}
	c.put("huge", append(append(append(resp.Manifests, resp.Manifests...), resp.Manifests...), resp.Manifests...))
	if _, ok := c.get("huge"); ok {
		t.Errorf("an entry larger than the whole cache was kept")
	}
}
