package reposerver

import (
	"context"
	"fmt"
	"io/fs"
	"os"

	"github.com/skiffcd/skiff/api/v1alpha1"
)

// Tree is a checkout of a git repository at a revision, for readers of its
// files other than renders (the ApplicationSet git generators). FS cannot
// leave the checkout, through symbolic links either. Release it when done.
type Tree struct {
	FS fs.FS
	// SHA is the commit the revision resolved to.
	SHA     string
	release func()
	root    *os.Root
}

// Release gives the checkout back to the cache.
func (t *Tree) Release() {
	_ = t.root.Close()
	t.release()
}

// Tree checks out repoURL at revision ("" is HEAD), resolved as renders
// resolve it: a resolution younger than RevisionTTL is reused (hard asks
// the remote again).
func (s *Server) Tree(ctx context.Context, repoURL, revision string, hard bool) (*Tree, error) {
	resolved, err := s.resolve(ctx, v1alpha1.ApplicationSource{RepoURL: repoURL, TargetRevision: revision}, hard, 0)
	if err != nil {
		return nil, err
	}
	dir, release, err := s.git.Acquire(ctx, repoURL, resolved.revision)
	if err != nil {
		return nil, fmt.Errorf("checking out %s at %s: %w", repoURL, resolved.revision, err)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		release()
		return nil, fmt.Errorf("opening the checkout of %s: %w", repoURL, err)
	}
	return &Tree{FS: root.FS(), SHA: resolved.revision, release: release, root: root}, nil
}
