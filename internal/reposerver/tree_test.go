package reposerver

import (
	"context"
	"io/fs"
	"testing"
	"time"

	"github.com/skiffcd/skiff/internal/testgit"
)

// A Tree reads the files of the commit its revision resolves to, and
// nothing outside its checkout.
func TestTreeReadsTheCommitAndStaysInsideIt(t *testing.T) {
	ctx := context.Background()
	repo := testgit.New(t)
	sha := repo.Commit(map[string]string{"apps/web/config.json": `{"a": 1}`, "apps/db/.keep": "x"})
	clock := &fakeClock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	server, _ := newTestServer(t, clock, Options{RevisionTTL: time.Minute})

	tree, err := server.Tree(ctx, repo.URL(), "HEAD", false)
	if err != nil {
		t.Fatal(err)
	}
	defer tree.Release()
	if tree.SHA != sha {
		t.Errorf("resolved to %s, want %s", tree.SHA, sha)
	}
	if data, err := fs.ReadFile(tree.FS, "apps/web/config.json"); err != nil || string(data) != `{"a": 1}` {
		t.Errorf("read %q, %v", data, err)
	}
	dirs, err := fs.Glob(tree.FS, "apps/*")
	if err != nil || len(dirs) != 2 {
		t.Errorf("apps/* = %v, %v; want two directories", dirs, err)
	}
	if _, err := fs.ReadFile(tree.FS, "../../../../etc/hostname"); err == nil {
		t.Error("a path out of the checkout was read")
	}

	next := repo.Commit(map[string]string{"apps/new/.keep": "x"})
	hard, err := server.Tree(ctx, repo.URL(), "HEAD", true)
	if err != nil {
		t.Fatal(err)
	}
	defer hard.Release()
	if hard.SHA != next {
		t.Errorf("a hard Tree resolved to %s, want the new commit %s", hard.SHA, next)
	}
	if _, err := server.Tree(ctx, repo.URL(), "no-such-branch", false); err == nil {
		t.Error("a missing revision gave a tree")
	}
}
