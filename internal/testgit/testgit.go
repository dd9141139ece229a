// Package testgit is a local git repository tests commit to and Skiff reads
// over file://, so no test needs a git server or the network.
package testgit

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// Repo is a repository in a test's temporary directory.
type Repo struct {
	t    testing.TB
	dir  string
	repo *git.Repository
}

// New creates an empty repository that is removed when the test ends.
func New(t testing.TB) *Repo {
	t.Helper()
	dir := t.TempDir()
	repo, err := git.PlainInit(dir, false)
	if err != nil {
		t.Fatal(err)
	}
	return &Repo{t: t, dir: dir, repo: repo}
}

// URL is the repository's file:// URL, for an Application's repoURL.
func (r *Repo) URL() string { return "file://" + r.dir }

// Commit writes files (path → content; "" deletes the path) and commits
// them; it returns the commit's SHA.
func (r *Repo) Commit(files map[string]string) string {
	r.t.Helper()
	wt, err := r.repo.Worktree()
	if err != nil {
		r.t.Fatal(err)
	}
	for p, content := range files {
		if content == "" {
			if _, err := wt.Remove(p); err != nil {
				r.t.Fatal(err)
			}
			continue
		}
		full := filepath.Join(r.dir, p)
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
	sha, err := wt.Commit("change", &git.CommitOptions{Author: &object.Signature{Name: "t", Email: "t@example.com", When: time.Now()}})
	if err != nil {
		r.t.Fatal(err)
	}
	return sha.String()
}

// Dir reads every file of dir (a test's testdata folder) into a map for
// Commit, with keys under prefix.
func Dir(t testing.TB, dir, prefix string) map[string]string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{}
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		files[filepath.Join(prefix, e.Name())] = string(data)
	}
	return files
}
