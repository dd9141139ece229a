package source

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// treesOnDisk lists the commit trees under a cache directory, by SHA.
func treesOnDisk(t *testing.T, cacheDir string) []string {
	t.Helper()
	dirs, err := filepath.Glob(filepath.Join(cacheDir, "*", "trees", "*"))
	if err != nil {
		t.Fatal(err)
	}
	var shas []string
	for _, d := range dirs {
		if name := filepath.Base(d); !strings.HasPrefix(name, ".") {
			shas = append(shas, name)
		}
	}
	slices.Sort(shas)
	return shas
}

func sorted(s ...string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}

// commits makes n commits, each changing one file, and returns their SHAs.
func commits(fx *fixtureRepo, n int) []string {
	shas := make([]string, n)
	for i := range n {
		fx.writeFile("app/cm.yaml", strings.Repeat("x", i+1)+"\n", 0o644)
		shas[i] = fx.commit("change")
	}
	return shas
}

// Every new commit of a repository used to leave its tree on disk forever:
// past the default bound, old trees go.
func TestCheckoutsPastTheDefaultBoundAreRemoved(t *testing.T) {
	fx := newFixtureRepo(t, t.TempDir(), "busy")
	shas := commits(fx, 101)
	cacheDir := t.TempDir()
	cache := NewCache(cacheDir, Options{})
	ctx := testContext(t)
	if _, err := cache.Resolve(ctx, fx.fileURL(), Credentials{}, "main"); err != nil {
		t.Fatal(err)
	}
	for _, sha := range shas {
		if _, err := cache.Checkout(ctx, fx.fileURL(), sha); err != nil {
			t.Fatal(err)
		}
	}
	on := treesOnDisk(t, cacheDir)
	if len(on) > 100 {
		t.Fatalf("%d trees on disk after 101 checkouts, want at most 100 (the default bound)", len(on))
	}
	if !slices.Contains(on, shas[100]) || slices.Contains(on, shas[0]) {
		t.Errorf("the newest tree must stay and the oldest go; on disk: %d trees, newest kept %v, oldest kept %v",
			len(on), slices.Contains(on, shas[100]), slices.Contains(on, shas[0]))
	}
}

// Past the bound the least recently used tree goes, never one a render
// holds, and a tree removed is written again when needed.
func TestLeastRecentlyUsedTreesNobodyHoldsAreRemovedFirst(t *testing.T) {
	fx := newFixtureRepo(t, t.TempDir(), "apps")
	c := commits(fx, 4)
	cacheDir := t.TempDir()
	cache := NewCache(cacheDir, Options{MaxCachedCheckouts: 2})
	ctx := testContext(t)
	url := fx.fileURL()
	if _, err := cache.Resolve(ctx, url, Credentials{}, "main"); err != nil {
		t.Fatal(err)
	}

	held, release, err := cache.Acquire(ctx, url, c[0])
	if err != nil {
		t.Fatal(err)
	}
	for _, sha := range c[1:3] {
		if _, err := cache.Checkout(ctx, url, sha); err != nil {
			t.Fatal(err)
		}
	}
	if got, want := treesOnDisk(t, cacheDir), sorted(c[0], c[2]); !slices.Equal(got, want) {
		t.Fatalf("trees on disk %v, want the held one and the newest %v", got, want)
	}
	if _, err := os.Stat(filepath.Join(held, "app", "cm.yaml")); err != nil {
		t.Fatalf("the held tree lost its files: %v", err)
	}

	release()
	release() // a second call does nothing
	if _, err := cache.Checkout(ctx, url, c[3]); err != nil {
		t.Fatal(err)
	}
	if got, want := treesOnDisk(t, cacheDir), sorted(c[2], c[3]); !slices.Equal(got, want) {
		t.Fatalf("trees on disk %v, want the two most recently used %v", got, want)
	}

	again, err := cache.Checkout(ctx, url, c[0])
	if err != nil {
		t.Fatal(err)
	}
	assertFile(t, filepath.Join(again, "app", "cm.yaml"), "x\n", 0o644)
	if st := cache.Stats(); st.Trees != 2 || st.Checkouts != 5 {
		t.Errorf("stats %+v, want 2 trees kept and 5 checkouts written", st)
	}
}

// The byte bound counts what the checkouts hold on disk.
func TestTreesPastTheByteBoundAreRemoved(t *testing.T) {
	fx := newFixtureRepo(t, t.TempDir(), "apps")
	fx.writeFile("big.txt", strings.Repeat("y", 4000), 0o644)
	c := commits(fx, 3)
	cacheDir := t.TempDir()
	cache := NewCache(cacheDir, Options{MaxCachedCheckoutBytes: 9000})
	ctx := testContext(t)
	if _, err := cache.Resolve(ctx, fx.fileURL(), Credentials{}, "main"); err != nil {
		t.Fatal(err)
	}
	for _, sha := range c {
		if _, err := cache.Checkout(ctx, fx.fileURL(), sha); err != nil {
			t.Fatal(err)
		}
	}
	if got, want := treesOnDisk(t, cacheDir), sorted(c[1], c[2]); !slices.Equal(got, want) {
		t.Errorf("trees on disk %v, want the two newest %v (about 4 KB each, 9000 bytes allowed)", got, want)
	}
	if st := cache.Stats(); st.TreeBytes > 9000 {
		t.Errorf("stats %+v, want at most 9000 bytes of trees", st)
	}
}

// A restarted process finds the trees of the previous one: they count
// towards the bound, oldest first, and the leftovers of checkouts that
// died half-way are removed once they are old.
func TestTreesOfAnEarlierProcessCountTowardsTheBound(t *testing.T) {
	fx := newFixtureRepo(t, t.TempDir(), "apps")
	c := commits(fx, 3)
	cacheDir := t.TempDir()
	ctx := testContext(t)
	earlier := NewCache(cacheDir, Options{})
	if _, err := earlier.Resolve(ctx, fx.fileURL(), Credentials{}, "main"); err != nil {
		t.Fatal(err)
	}
	var dirs []string
	for i, sha := range c {
		dir, err := earlier.Checkout(ctx, fx.fileURL(), sha)
		if err != nil {
			t.Fatal(err)
		}
		when := time.Now().Add(time.Duration(i-10) * time.Minute)
		if err := os.Chtimes(dir, when, when); err != nil {
			t.Fatal(err)
		}
		dirs = append(dirs, dir)
	}
	trees := filepath.Dir(dirs[0])
	stale, fresh := filepath.Join(trees, ".tmp-stale"), filepath.Join(trees, ".tmp-writing")
	for _, d := range []string{stale, fresh} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	old := time.Now().Add(-2 * time.Hour)
	if err := os.Chtimes(stale, old, old); err != nil {
		t.Fatal(err)
	}

	restarted := NewCache(cacheDir, Options{MaxCachedCheckouts: 2})
	if _, err := restarted.Checkout(ctx, fx.fileURL(), c[2]); err != nil {
		t.Fatal(err)
	}
	if got, want := treesOnDisk(t, cacheDir), sorted(c[1], c[2]); !slices.Equal(got, want) {
		t.Errorf("trees on disk %v, want the two newest %v", got, want)
	}
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("a temporary tree two hours old is still there (%v)", err)
	}
	if _, err := os.Stat(fresh); err != nil {
		t.Errorf("a temporary tree another process may be writing was removed: %v", err)
	}
	if st := restarted.Stats(); st.Checkouts != 0 {
		t.Errorf("stats %+v: the tree on disk was written again", st)
	}
}
