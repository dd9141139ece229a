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

// Repo is a repository in a test's temporary directory, or in a directory
// a program that is not a test chose (see Init).
type Repo struct {
	t    testing.TB // nil for a repository Init made
	dir  string
	repo *git.Repository
}

// New creates an empty repository that is removed when the test ends.
func New(t testing.TB) *Repo {
	t.Helper()
	r, err := Init(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	r.t = t
	return r
}

// Init creates an empty repository in dir, for a program that is not a
// test (bench/apps); such a repository is committed to with CommitFiles.
func Init(dir string) (*Repo, error) {
	repo, err := git.PlainInit(dir, false)
	if err != nil {
		return nil, err
	}
	return &Repo{dir: dir, repo: repo}, nil
}

// URL is the repository's file:// URL, for an Application's repoURL.
func (r *Repo) URL() string { return "file://" + r.dir }

// Commit writes files (path → content; "" deletes the path) and commits
// them; it returns the commit's SHA. The repository is New's.
func (r *Repo) Commit(files map[string]string) string {
	r.t.Helper()
	sha, err := r.CommitFiles(files)
	if err != nil {
		r.t.Fatal(err)
	}
	return sha
}

// CommitFiles is Commit returning its error rather than failing a test.
func (r *Repo) CommitFiles(files map[string]string) (string, error) {
	wt, err := r.repo.Worktree()
	if err != nil {
		return "", err
	}
	for p, content := range files {
		if content == "" {
			if _, err := wt.Remove(p); err != nil {
				return "", err
			}
			continue
		}
		full := filepath.Join(r.dir, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			return "", err
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			return "", err
		}
	}
	// One add of the whole worktree, which holds nothing but what
	// CommitFiles wrote: an add per path computes the worktree's status
	// (or rewrites the index) each time, 5 to 30 times slower for the
	// benchmark's commits of 1000 files.
	if err := wt.AddWithOptions(&git.AddOptions{All: true}); err != nil {
		return "", err
	}
	sha, err := wt.Commit("change", &git.CommitOptions{Author: &object.Signature{Name: "t", Email: "t@example.com", When: time.Now()}})
	if err != nil {
		return "", err
	}
	return sha.String(), nil
}

// Dir reads every file of dir (a test's testdata folder) into a map for
// Commit, with keys under prefix.
func Dir(t testing.TB, dir, prefix string) map[string]string {
	t.Helper()
	files, err := ReadDir(dir, prefix)
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// ReadDir is Dir for a program that is not a test: the files of dir (not
// its subdirectories), keyed under prefix.
func ReadDir(dir, prefix string) (map[string]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	files := map[string]string{}
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			return nil, err
		}
		files[filepath.Join(prefix, e.Name())] = string(data)
	}
	return files, nil
}
