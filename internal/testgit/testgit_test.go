package testgit

import (
	"maps"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// tree returns the files of commit sha, path → content.
func tree(t *testing.T, r *Repo, sha string) map[string]string {
	t.Helper()
	c, err := r.repo.CommitObject(plumbing.NewHash(sha))
	if err != nil {
		t.Fatal(err)
	}
	files, err := c.Files()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	if err := files.ForEach(func(f *object.File) error {
		content, err := f.Contents()
		out[f.Name] = content
		return err
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

// Each commit holds exactly the files written so far: changed, added and,
// for "", removed ones, in a repository New or Init made.
func TestCommitsHoldTheFilesWritten(t *testing.T) {
	repos := map[string]func(t *testing.T) *Repo{
		"a test's repository": func(t *testing.T) *Repo { return New(t) },
		"a program's repository": func(t *testing.T) *Repo {
			r, err := Init(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			return r
		},
	}
	steps := []struct {
		files, want map[string]string
	}{
		{
			files: map[string]string{"a.yaml": "a: 1\n", "apps/web/b.yaml": "b: 1\n"},
			want:  map[string]string{"a.yaml": "a: 1\n", "apps/web/b.yaml": "b: 1\n"},
		},
		{
			files: map[string]string{"apps/web/b.yaml": "b: 2\n", "apps/api/c.yaml": "c: 1\n"},
			want:  map[string]string{"a.yaml": "a: 1\n", "apps/web/b.yaml": "b: 2\n", "apps/api/c.yaml": "c: 1\n"},
		},
		{
			files: map[string]string{"a.yaml": ""},
			want:  map[string]string{"apps/web/b.yaml": "b: 2\n", "apps/api/c.yaml": "c: 1\n"},
		},
	}
	for name, newRepo := range repos {
		t.Run(name, func(t *testing.T) {
			r := newRepo(t)
			seen := map[string]bool{}
			for i, step := range steps {
				sha, err := r.CommitFiles(step.files)
				if err != nil {
					t.Fatalf("commit %d: %v", i, err)
				}
				if seen[sha] {
					t.Fatalf("commit %d: %s repeats an earlier commit", i, sha)
				}
				seen[sha] = true
				if got := tree(t, r, sha); !maps.Equal(got, step.want) {
					t.Errorf("commit %d holds %v, want %v", i, got, step.want)
				}
			}
		})
	}
}
