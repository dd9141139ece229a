package reposerver

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// testRepo is a git repository on disk that tests commit to.
type testRepo struct {
	t    *testing.T
	dir  string
	repo *git.Repository
}

func newTestRepo(t *testing.T) *testRepo {
	t.Helper()
	dir := t.TempDir()
	repo, err := git.PlainInit(dir, false)
	if err != nil {
		t.Fatal(err)
	}
	return &testRepo{t: t, dir: dir, repo: repo}
}

func (r *testRepo) url() string { return "file://" + r.dir }

// commit writes files (path → content; "" deletes) and commits them,
// returning the commit SHA.
func (r *testRepo) commit(files map[string]string) string {
	r.t.Helper()
	wt, err := r.repo.Worktree()
	if err != nil {
		r.t.Fatal(err)
	}
	for p, content := range files {
		full := filepath.Join(r.dir, p)
		if content == "" {
			if _, err := wt.Remove(p); err != nil {
				r.t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			r.t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			r.t.Fatal(err)
		}
		if _, err := wt.Add(p); err != nil {
			r.t.Fatal(err)
		}
	}
	sha, err := wt.Commit("change", &git.CommitOptions{Author: &object.Signature{Name: "test", Email: "t@example.com", When: time.Now()}})
	if err != nil {
		r.t.Fatal(err)
	}
	return sha.String()
}

// fakeClock is a settable clock for TTL tests.
type fakeClock struct{ now time.Time }

func (c *fakeClock) Now() time.Time          { return c.now }
func (c *fakeClock) Advance(d time.Duration) { c.now = c.now.Add(d) }

const configMapYAML = `apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
data:
  level: info
`
