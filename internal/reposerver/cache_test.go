package reposerver

import (
	"context"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/skiffcd/skiff/api/v1alpha1"
	"github.com/skiffcd/skiff/internal/render"
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

// renderedConfigMap renders a one-ConfigMap app, for tests of the cache.
func renderedConfigMap(t *testing.T) *Response {
	t.Helper()
	repo := testgit.New(t)
	repo.Commit(map[string]string{"app/cm.yaml": configMapYAML})
	server, _ := newTestServer(t, &fakeClock{now: time.Now()}, Options{})
	resp, err := server.Manifests(context.Background(), request(repo.URL(), "app"))
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// entrySize is the bytes the cache counts for manifests.
func entrySize(t *testing.T, manifests []render.Manifest) int64 {
	t.Helper()
	_, size, err := encodeManifests(manifests)
	if err != nil {
		t.Fatal(err)
	}
	return size
}

// The cache holds JSON: a hit gives back the rendered objects, each
// caller its own copy, so a caller that modifies one changes nobody
// else's.
func TestManifestCacheHitIsTheRenderAsACopyOfItsOwn(t *testing.T) {
	resp := renderedConfigMap(t)
	c := newManifestCache(1 << 20)
	c.put("shop", "shop@1", resp.Manifests, nil)

	first, ok, _ := c.get("shop@1")
	if !ok {
		t.Fatal("the entry just stored is not cached")
	}
	if len(first) != len(resp.Manifests) {
		t.Fatalf("hit has %d manifests, the render %d", len(first), len(resp.Manifests))
	}
	for i, m := range first {
		if m.File != resp.Manifests[i].File || !reflect.DeepEqual(m.Object.Object, resp.Manifests[i].Object.Object) {
			t.Errorf("manifest %d: hit %s %v, render %s %v", i, m.File, m.Object.Object, resp.Manifests[i].File, resp.Manifests[i].Object.Object)
		}
	}
	first[0].Object.SetLabels(map[string]string{"changed": "by-the-first-caller"})
	second, _, _ := c.get("shop@1")
	if second[0].Object.GetLabels()["changed"] != "" {
		t.Errorf("a caller's change to its hit reached the next hit: %v", second[0].Object.GetLabels())
	}
}

func TestManifestCacheStaysWithinItsByteBudget(t *testing.T) {
	resp := renderedConfigMap(t)
	size := entrySize(t, resp.Manifests)

	c := newManifestCache(3 * size)
	for _, key := range []string{"a", "b", "c", "d"} {
		c.put(key, key, resp.Manifests, nil)
	}
	if c.bytes > c.maxBytes {
		t.Errorf("cache holds %d bytes, budget %d", c.bytes, c.maxBytes)
	}
	if _, ok, _ := c.get("a"); ok {
		t.Errorf("the least recently used entry was kept")
	}
	if _, ok, _ := c.get("d"); !ok {
		t.Errorf("the newest entry was evicted")
	}
	c.put("huge", "huge", append(append(append(resp.Manifests, resp.Manifests...), resp.Manifests...), resp.Manifests...), nil)
	if _, ok, _ := c.get("huge"); ok {
		t.Errorf("an entry larger than the whole cache was kept")
	}
}

// The cache keeps, per app as one caller renders it, only the latest
// render: an app's older revisions go as soon as a new one is stored.
func TestManifestCacheKeepsOneEntryPerApp(t *testing.T) {
	resp := renderedConfigMap(t)
	at := func(app, revision string) Request {
		req := request("https://git.example/repo.git", "app")
		req.AppName, req.KubeVersion, req.APIVersions = app, "v1.35.0", []string{"v1", "apps/v1"}
		req.Sources[0].TargetRevision = revision
		return req
	}
	withoutAPIVersions := func(req Request) Request {
		req.APIVersions = nil
		return req
	}
	tests := map[string]struct {
		puts     []Request
		wantKept []int // indexes into puts of the requests still cached
	}{
		"two revisions of one app keep only the newer": {
			puts:     []Request{at("shop", "v1"), at("shop", "v2")},
			wantKept: []int{1},
		},
		"two apps keep one entry each": {
			puts:     []Request{at("shop", "v1"), at("blog", "v1")},
			wantKept: []int{0, 1},
		},
		"a new revision of one app leaves the other app's entry": {
			puts:     []Request{at("shop", "v1"), at("blog", "v1"), at("shop", "v2")},
			wantKept: []int{1, 2},
		},
		"storing the same render again keeps one entry": {
			puts:     []Request{at("shop", "v1"), at("shop", "v1")},
			wantKept: []int{1},
		},
		"one app rendered with and without the cluster's API versions keeps both": {
			puts:     []Request{at("shop", "v1"), withoutAPIVersions(at("shop", "v1"))},
			wantKept: []int{0, 1},
		},
		"going back to an earlier revision replaces the later one": {
			puts:     []Request{at("shop", "v1"), at("shop", "v2"), at("shop", "v1")},
			wantKept: []int{2},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			c := newManifestCache(1 << 20)
			keys := make([]string, len(tc.puts))
			for i, req := range tc.puts {
				key, err := cacheKey(req, []string{req.Sources[0].TargetRevision})
				if err != nil {
					t.Fatal(err)
				}
				keys[i] = key
				c.put(cacheSlot(req), key, resp.Manifests, nil)
			}
			kept := map[string]bool{}
			for _, i := range tc.wantKept {
				kept[keys[i]] = true
			}
			for i, key := range keys {
				if _, ok, _ := c.get(key); ok != kept[key] {
					t.Errorf("put %d cached = %v, want %v", i, ok, kept[key])
				}
			}
			if len(c.entries) != len(kept) || c.order.Len() != len(kept) || len(c.slots) != len(kept) {
				t.Errorf("cache holds %d entries, %d in LRU order, %d slots; want %d of each", len(c.entries), c.order.Len(), len(c.slots), len(kept))
			}
			if want := int64(len(kept)) * entrySize(t, resp.Manifests); c.bytes != want {
				t.Errorf("cache counts %d bytes, want %d", c.bytes, want)
			}
		})
	}
}

// An entry evicted by the byte bound takes its slot's index with it, so a
// later render of that app does not evict another app's entry.
func TestManifestCacheEvictionByBytesClearsTheSlot(t *testing.T) {
	resp := renderedConfigMap(t)
	c := newManifestCache(2 * entrySize(t, resp.Manifests))
	c.put("shop", "shop@1", resp.Manifests, nil)
	c.put("blog", "blog@1", resp.Manifests, nil)
	c.put("news", "news@1", resp.Manifests, nil) // evicts shop@1 by bytes
	if _, ok := c.slots["shop"]; ok {
		t.Errorf("the slot of an entry evicted by bytes is still indexed")
	}
	c.put("shop", "shop@2", resp.Manifests, nil) // evicts blog@1 by bytes, the LRU entry
	if _, ok, _ := c.get("news@1"); !ok {
		t.Errorf("another app's newer entry was evicted")
	}
	if _, ok, _ := c.get("shop@2"); !ok {
		t.Errorf("the newest entry was not kept")
	}
	if len(c.entries) != len(c.slots) || c.bytes > c.maxBytes {
		t.Errorf("%d entries, %d slots, %d of %d bytes", len(c.entries), len(c.slots), c.bytes, c.maxBytes)
	}
}

// A refresh of many apps of one repository asks the remote a few times, not
// once per app, and every app still sees the commit pushed before it asked.
func TestConcurrentRefreshesShareOneLsRemote(t *testing.T) {
	ctx := context.Background()
	repo := testgit.New(t)
	repo.Commit(map[string]string{"app/cm.yaml": configMapYAML})
	var armed atomic.Bool
	var slow sync.Once
	dir := t.TempDir()
	git := source.NewCache(filepath.Join(dir, "repos"), source.Options{})
	server := New(git, helmrepo.New(filepath.Join(dir, "charts"), nil), Options{
		// The first resolution is slow, so the other callers arrive while it
		// is in flight, as a burst of refreshes does.
		Credentials: func(context.Context, string) (source.Credentials, error) {
			if armed.Load() {
				slow.Do(func() { time.Sleep(300 * time.Millisecond) })
			}
			return source.Credentials{}, nil
		},
	})
	if _, err := server.Manifests(ctx, request(repo.URL(), "app")); err != nil {
		t.Fatal(err)
	}
	newSHA := repo.Commit(map[string]string{"app/cm.yaml": strings.ReplaceAll(configMapYAML, "info", "debug")})
	before := git.Stats()
	armed.Store(true)

	const callers = 20
	revisions := make([]string, callers)
	errs := make([]error, callers)
	var wg sync.WaitGroup
	for i := range callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req := request(repo.URL(), "app")
			req.MaxRevisionAge = time.Nanosecond // a refresh: ask git now
			resp, err := server.Manifests(ctx, req)
			errs[i] = err
			if err == nil {
				revisions[i] = resp.Revisions[0]
			}
		}()
	}
	wg.Wait()
	for i := range callers {
		if errs[i] != nil || revisions[i] != newSHA {
			t.Errorf("caller %d: revision %s, error %v; want %s", i, revisions[i], errs[i], newSHA)
		}
	}
	if n := git.Stats().LsRemotes - before.LsRemotes; n < 1 || n > 3 {
		t.Errorf("%d callers made %d ls-remotes, want 1 to 3", callers, n)
	}
}

// The resolved-revision cache never moves back: a flight that Forget
// dropped, or one that started before the cached answer, does not land. A
// flight that moves it to another revision is told, once.
func TestResolutionsLandOnlyWhenNewer(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	key := revisionKey{repoURL: "https://git.example/repo.git", revision: "HEAD"}
	cases := map[string]struct {
		cached     *resolvedRevision
		registered bool
		started    time.Time
		want       string
		wantMoves  []RevisionMove
	}{
		"a flight lands in an empty cache, which is no move": {registered: true, started: t0, want: "new"},
		"a later flight replaces the cached answer and tells of the move": {
			cached: &resolvedRevision{revision: "old", at: t0}, registered: true, started: t0.Add(time.Second), want: "new",
			wantMoves: []RevisionMove{{RepoURL: key.repoURL, TargetRevision: "HEAD", From: "old", To: "new"}}},
		"a later flight that finds the same revision tells of no move": {
			cached: &resolvedRevision{revision: "new", at: t0}, registered: true, started: t0.Add(time.Second), want: "new"},
		"an earlier flight leaves a later answer alone": {
			cached: &resolvedRevision{revision: "old", at: t0.Add(time.Second)}, registered: true, started: t0, want: "old"},
		"a flight Forget dropped does not land": {started: t0, want: ""},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			s := New(nil, nil, Options{})
			var moves []RevisionMove
			s.OnRevisionMove(func(m RevisionMove) { moves = append(moves, m) })
			if tc.cached != nil {
				s.revisions[key] = *tc.cached
			}
			f := &flight{started: tc.started, done: make(chan struct{}), result: resolvedRevision{revision: "new", at: tc.started}}
			if tc.registered {
				s.flights[key] = f
			}
			s.land(key, f)
			if got := s.revisions[key].revision; got != tc.want {
				t.Errorf("cached revision %q, want %q", got, tc.want)
			}
			if _, still := s.flights[key]; still {
				t.Error("the flight is still registered after landing")
			}
			if !reflect.DeepEqual(moves, tc.wantMoves) {
				t.Errorf("moves told %+v, want %+v", moves, tc.wantMoves)
			}
		})
	}
}

// A sync pins the revision its comparison resolved. It must render the
// source as written (what kustomize's envsubst sees of the target revision
// is the same in both) and so reuse the comparison's render; a pin to an
// older commit renders that commit.
func TestPinnedRevisionRendersTheSourceAsWrittenAndSharesItsRender(t *testing.T) {
	ctx := context.Background()
	repo := testgit.New(t)
	files := func(level string) map[string]string {
		return map[string]string{
			"app/kustomization.yaml": "resources: [cm.yaml]\n",
			"app/cm.yaml":            strings.Replace(configMapYAML, "level: info", "level: "+level, 1),
		}
	}
	old := repo.Commit(files("info"))
	clock := &fakeClock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	server, _ := newTestServer(t, clock, Options{RevisionTTL: time.Minute})
	req := request(repo.URL(), "app")
	req.Sources[0].Kustomize = &v1alpha1.ApplicationSourceKustomize{
		CommonAnnotations:         map[string]string{"target": "${ARGOCD_APP_SOURCE_TARGET_REVISION}"},
		CommonAnnotationsEnvsubst: true,
	}
	pinned := func(revision string) Request {
		r := req
		r.Revisions = []string{revision}
		return r
	}
	look := func(resp *Response) (level, target string) {
		obj := resp.Manifests[0].Object
		level, _, _ = unstructured.NestedString(obj.Object, "data", "level")
		return level, obj.GetAnnotations()["target"]
	}

	compared, err := server.Manifests(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	synced, err := server.Manifests(ctx, pinned(compared.Revisions[0]))
	if err != nil {
		t.Fatal(err)
	}
	if !synced.CacheHit || synced.Revisions[0] != old {
		t.Errorf("sync pinned to the compared revision: hit=%v revision=%v, want the comparison's render at %s", synced.CacheHit, synced.Revisions, old)
	}
	if level, target := look(synced); level != "info" || target != "HEAD" {
		t.Errorf("sync rendered level=%q target=%q, want info and the targetRevision as written (HEAD)", level, target)
	}

	repo.Commit(files("debug"))
	clock.Advance(2 * time.Minute)
	back, err := server.Manifests(ctx, pinned(old))
	if err != nil {
		t.Fatal(err)
	}
	if level, target := look(back); back.Revisions[0] != old || level != "info" || target != "HEAD" {
		t.Errorf("pinned to the older commit: revision %v level=%q target=%q, want %s, info, HEAD", back.Revisions, level, target, old)
	}
	head, err := server.Manifests(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if level, _ := look(head); head.Revisions[0] == old || level != "debug" {
		t.Errorf("unpinned after the commit: revision %v level=%q, want the new commit with debug", head.Revisions, level)
	}
}

// A caller that holds an earlier render (the controller's last comparison)
// asks whether the sources still render to it: an unchanged commit answers
// Unchanged without manifests, a new commit or a hard refresh renders.
func TestUnlessAnswersUnchangedForTheSameRender(t *testing.T) {
	ctx := context.Background()
	repo := testgit.New(t)
	repo.Commit(map[string]string{"app/cm.yaml": configMapYAML})
	clock := &fakeClock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	server, _ := newTestServer(t, clock, Options{RevisionTTL: time.Minute})
	first, err := server.Manifests(ctx, request(repo.URL(), "app"))
	if err != nil {
		t.Fatal(err)
	}
	if first.Key == "" || first.Unchanged {
		t.Fatalf("first render: key %q, unchanged %v; want a key and a render", first.Key, first.Unchanged)
	}
	ask := func(hard bool, maxAge time.Duration) *Response {
		t.Helper()
		req := request(repo.URL(), "app")
		req.Unless, req.Hard, req.MaxRevisionAge = first.Key, hard, maxAge
		resp, err := server.Manifests(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}

	same := ask(false, 0)
	if !same.Unchanged || len(same.Manifests) != 0 || same.Key != first.Key || same.Revisions[0] != first.Revisions[0] {
		t.Errorf("same commit: unchanged %v, %d manifests, key %q, revisions %v; want unchanged, none, %q, %v",
			same.Unchanged, len(same.Manifests), same.Key, same.Revisions, first.Key, first.Revisions)
	}
	if hard := ask(true, 0); hard.Unchanged || len(hard.Manifests) != 1 {
		t.Errorf("hard refresh: unchanged %v with %d manifests; want a render", hard.Unchanged, len(hard.Manifests))
	}

	sha := repo.Commit(map[string]string{"app/cm.yaml": strings.ReplaceAll(configMapYAML, "level: info", "level: debug")})
	clock.Advance(time.Second)
	moved := ask(false, time.Nanosecond) // a poll: no older answer than now
	if moved.Unchanged || len(moved.Manifests) != 1 || moved.Revisions[0] != sha || moved.Key == first.Key {
		t.Errorf("new commit: unchanged %v, %d manifests, revisions %v; want a render of %s under a new key",
			moved.Unchanged, len(moved.Manifests), moved.Revisions, sha)
	}
}
