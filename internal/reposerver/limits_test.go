package reposerver

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/skiffcd/skiff/internal/render"
	"github.com/skiffcd/skiff/internal/source"
	"github.com/skiffcd/skiff/internal/source/helmrepo"
	"github.com/skiffcd/skiff/internal/testgit"
	"github.com/skiffcd/skiff/internal/testwait"
)

// bigConfigMap is a ConfigMap of about size bytes of YAML, in many small
// entries, whose decoded form is several times larger.
func bigConfigMap(name string, size int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: %s\ndata:\n", name)
	for i := 0; b.Len() < size; i++ {
		fmt.Fprintf(&b, "  key-%07d: value-%07d-abcdefghijklmnop\n", i, i)
	}
	return b.String()
}

// A directory larger than the output limit fails before its files are
// decoded (the heap stays flat), and its failure is remembered: the next
// comparison of the same revision renders nothing.
func TestManifestsLargerThanTheLimitFailWithoutDecodingAndOnce(t *testing.T) {
	ctx := context.Background()
	files := map[string]string{"small/cm.yaml": configMapYAML}
	for i := range 12 {
		files[fmt.Sprintf("big/cm-%02d.yaml", i)] = bigConfigMap(fmt.Sprintf("big-%02d", i), 1<<20)
	}
	repo := testgit.New(t)
	repo.Commit(files)
	server, _ := newTestServer(t, &fakeClock{now: time.Now()}, Options{Limits: render.Limits{MaxOutputBytes: 8 << 20}})
	// Fetch and check out the commit first: what follows measures the render.
	if _, err := server.Manifests(ctx, request(repo.URL(), "small")); err != nil {
		t.Fatal(err)
	}

	misses, hits := cacheCount(t, "miss"), cacheCount(t, "hit")
	runtime.GC()
	before := allocated()
	_, err := server.Manifests(ctx, request(repo.URL(), "big"))
	grew := allocated() - before
	t.Logf("the render allocated %d KiB: %v", grew>>10, err)
	if err == nil || !strings.Contains(err.Error(), "larger than the limit of 8388608 bytes") {
		t.Fatalf("Manifests() error = %v, want the output limit", err)
	}
	if grew > 4<<20 {
		t.Errorf("rendering 12 MiB of YAML against an 8 MiB limit allocated %d MiB, want under 4 MiB", grew>>20)
	}

	if _, err := server.Manifests(ctx, request(repo.URL(), "big")); err == nil {
		t.Fatal("the second call succeeded")
	}
	if got := cacheCount(t, "miss") - misses; got != 1 {
		t.Errorf("%v renders for two calls on the same revision, want 1", got)
	}
	if got := cacheCount(t, "hit") - hits; got != 1 {
		t.Errorf("%v cache hits, want the second call's", got)
	}
}

func allocated() uint64 {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.TotalAlloc
}

// loopChart is a chart whose template runs for minutes.
var loopChart = map[string]string{
	"Chart.yaml":          "apiVersion: v2\nname: loop\nversion: 0.1.0\n",
	"templates/loop.yaml": "{{- range until 10000 }}{{- range until 10000 }}{{- end }}{{- end }}\n",
}

func chartFiles(dir string, files map[string]string) map[string]string {
	out := map[string]string{}
	for name, content := range files {
		out[dir+"/"+name] = content
	}
	return out
}

// One app whose renders never end, asked for again and again (by its
// comparisons, by read-only users of /manifests), holds one render worker:
// the other apps keep rendering on the rest.
func TestSlowAppDoesNotBlockTheOthers(t *testing.T) {
	files := chartFiles("slow", loopChart)
	for i := range 3 {
		files[fmt.Sprintf("fast-%d/Chart.yaml", i)] = "apiVersion: v2\nname: fast\nversion: 0.1.0\n"
		files[fmt.Sprintf("fast-%d/templates/cm.yaml", i)] = configMapYAML
	}
	repo := testgit.New(t)
	repo.Commit(files)
	pool := render.NewPool(render.PoolOptions{Size: 2})
	server, _ := newTestServer(t, &fakeClock{now: time.Now()}, Options{Workers: pool, Limits: render.Limits{Timeout: time.Minute}})

	slowCtx, stopSlow := context.WithCancel(context.Background())
	var slow sync.WaitGroup
	defer func() {
		stopSlow()
		slow.Wait()
	}()
	for i := range 6 {
		req := request(repo.URL(), "slow")
		req.AppName, req.Namespace = "slow", fmt.Sprintf("ns-%d", i) // six different renders of one app
		slow.Go(func() {
			if _, err := server.Manifests(slowCtx, req); !errors.Is(err, context.Canceled) {
				t.Errorf("slow render: %v, want it cancelled when the test ends", err)
			}
		})
	}
	testwait.Eventually(t, "the slow app's render to start", func() bool { return pool.Stats().Jobs >= 1 },
		testwait.Timeout(10*time.Second))

	for i := range 3 {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		req := request(repo.URL(), fmt.Sprintf("fast-%d", i))
		req.AppName = fmt.Sprintf("fast-%d", i)
		start := time.Now()
		resp, err := server.Manifests(ctx, req)
		cancel()
		if err != nil || len(resp.Manifests) != 1 {
			t.Fatalf("fast app %d while the slow app renders: %v", i, err)
		}
		t.Logf("fast app %d rendered in %s", i, time.Since(start).Round(time.Millisecond))
	}
	if jobs := pool.Stats().Jobs; jobs != 4 {
		t.Errorf("%d jobs ran, want 4: one for the slow app (its other renders wait for it) and one per fast app", jobs)
	}
}

// Callers of the same render share it rather than render it once each.
func TestConcurrentCallersOfOneRenderShareIt(t *testing.T) {
	repo := testgit.New(t)
	repo.Commit(map[string]string{"chart/Chart.yaml": "apiVersion: v2\nname: c\nversion: 0.1.0\n", "chart/templates/cm.yaml": configMapYAML})
	pool := render.NewPool(render.PoolOptions{Size: 2})
	server, _ := newTestServer(t, &fakeClock{now: time.Now()}, Options{Workers: pool})
	var wg sync.WaitGroup
	results := make([]*Response, 5)
	for i := range results {
		wg.Go(func() {
			resp, err := server.Manifests(context.Background(), request(repo.URL(), "chart"))
			if err != nil {
				t.Error(err)
				return
			}
			results[i] = resp
			// Each caller changes its manifests at once (a comparison
			// defaults namespaces, a sync adds tracking), while the others
			// may still be copying theirs: go test -race sees a shared one.
			for n := range 200 {
				for _, m := range resp.Manifests {
					m.Object.SetLabels(map[string]string{"n": strconv.Itoa(n)})
				}
			}
		})
	}
	wg.Wait()
	if jobs := pool.Stats().Jobs; jobs != 1 {
		t.Errorf("%d renders for five concurrent callers of one revision, want 1", jobs)
	}
	for i, r := range results {
		if r == nil || len(r.Manifests) != 1 {
			t.Fatalf("caller %d got %v", i, r)
		}
		if i > 0 && r.Manifests[0].Object == results[0].Manifests[0].Object {
			t.Errorf("callers %d and 0 share one object; each must own its manifests", i)
		}
	}
}

// Revisions stay resolved for minutes while checkouts may be removed
// meanwhile: a render checks its tree out again if it must.
func TestRenderChecksOutAgainATreeRemovedSinceItsResolution(t *testing.T) {
	ctx := context.Background()
	a, b := testgit.New(t), testgit.New(t)
	a.Commit(map[string]string{"app/cm.yaml": configMapYAML})
	b.Commit(map[string]string{"app/cm.yaml": configMapYAML})
	dir := t.TempDir()
	git := source.NewCache(filepath.Join(dir, "repos"), source.Options{MaxCachedCheckouts: 1})
	server := New(git, helmrepo.New(filepath.Join(dir, "charts"), nil), Options{RevisionTTL: time.Hour})
	for i, url := range []string{a.URL(), b.URL(), a.URL()} {
		req := request(url, "app")
		req.AppName = fmt.Sprintf("app-%d", i) // a render, not a cache hit
		if _, err := server.Manifests(ctx, req); err != nil {
			t.Fatalf("render %d: %v", i, err)
		}
	}
	if st := git.Stats(); st.Checkouts != 3 || st.Trees != 1 || st.LsRemotes != 2 {
		t.Errorf("git stats %+v, want 3 checkouts (the first tree again), 1 tree kept, 2 ls-remotes", st)
	}
}
