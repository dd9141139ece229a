package source

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// maxTreeDepth bounds directory nesting; git trees cannot be cyclic, so this
// only protects the stack against hostile repositories.
const maxTreeDepth = 1024

// maxSymlinkTarget bounds what is read as a symlink target.
const maxSymlinkTarget = 4096

// Checkout materializes the tree of commit sha, which must already be in the
// cache (see Resolve), and returns its directory. The tree is written once,
// into a temporary directory renamed into place, so readers never see a
// partial tree; later and concurrent calls return the same directory.
// Symlinks stay symlinks and executable files keep their exec bit.
//
// The directory is shared by every caller: treat it as read-only.
func (c *Cache) Checkout(ctx context.Context, rawURL, sha string) (string, error) {
	dir, err := c.checkout(ctx, rawURL, strings.ToLower(strings.TrimSpace(sha)))
	if err != nil {
		return "", newRepoError("checkout", rawURL, Credentials{}, sha, err)
	}
	return dir, nil
}

func (c *Cache) checkout(ctx context.Context, rawURL, sha string) (string, error) {
	if len(sha) != 40 || !isHex(sha) {
		return "", errors.New("want a full 40 character commit SHA")
	}
	r := c.entry(rawURL)
	treesDir := filepath.Join(r.dir, "trees")
	final := filepath.Join(treesDir, sha)
	if isDir(final) {
		return final, nil
	}

	r.mu.Lock()
	defer r.mu.Unlock()
	if isDir(final) { // materialized while we waited
		return final, nil
	}
	repo, err := r.open(false)
	if err != nil {
		return "", err
	}
	commit, err := repo.CommitObject(plumbing.NewHash(sha))
	if errors.Is(err, plumbing.ErrObjectNotFound) {
		return "", fmt.Errorf("%w: commit is not in the cache; resolve it first", ErrRevisionNotFound)
	}
	if err != nil {
		return "", fmt.Errorf("read commit: %w", err)
	}
	tree, err := commit.Tree()
	if err != nil {
		return "", fmt.Errorf("read tree: %w", err)
	}

	if err := os.MkdirAll(treesDir, 0o755); err != nil {
		return "", fmt.Errorf("create trees directory: %w", err)
	}
	tmp, err := os.MkdirTemp(treesDir, ".tmp-"+sha+"-")
	if err != nil {
		return "", fmt.Errorf("create temporary tree directory: %w", err)
	}
	keep := false
	defer func() {
		if !keep {
			_ = os.RemoveAll(tmp)
		}
	}()
	if err := writeTree(ctx, repo, tree, tmp, 0); err != nil {
		return "", err
	}
	if err := os.Chmod(tmp, 0o755); err != nil { // MkdirTemp creates 0700
		return "", fmt.Errorf("set tree permissions: %w", err)
	}
	if err := os.Rename(tmp, final); err != nil {
		if isDir(final) { // another process won the race; its tree is identical
			return final, nil
		}
		return "", fmt.Errorf("move tree into place: %w", err)
	}
	keep = true
	c.checkouts.Add(1)
	return final, nil
}

func writeTree(ctx context.Context, repo *git.Repository, tree *object.Tree, dir string, depth int) error {
	if depth > maxTreeDepth {
		return fmt.Errorf("tree is nested deeper than %d directories", maxTreeDepth)
	}
	for _, entry := range tree.Entries {
		if err := ctx.Err(); err != nil {
			return err
		}
		if !safeEntryName(entry.Name) {
			return fmt.Errorf("tree %s has an unsafe entry name %q", tree.Hash, entry.Name)
		}
		path := filepath.Join(dir, entry.Name)
		switch entry.Mode {
		case filemode.Dir:
			sub, err := repo.TreeObject(entry.Hash)
			if err != nil {
				return fmt.Errorf("read tree %s: %w", path, err)
			}
			if err := os.Mkdir(path, 0o755); err != nil {
				return fmt.Errorf("create directory: %w", err)
			}
			if err := writeTree(ctx, repo, sub, path, depth+1); err != nil {
				return err
			}
		case filemode.Regular, filemode.Deprecated:
			if err := writeBlob(repo, entry.Hash, path, 0o644); err != nil {
				return err
			}
		case filemode.Executable:
			if err := writeBlob(repo, entry.Hash, path, 0o755); err != nil {
				return err
			}
		case filemode.Symlink:
			if err := writeSymlink(repo, entry.Hash, path); err != nil {
				return err
			}
		case filemode.Submodule:
			// Submodules are not fetched; git leaves an empty directory too.
			if err := os.Mkdir(path, 0o755); err != nil {
				return fmt.Errorf("create submodule directory: %w", err)
			}
		default:
			return fmt.Errorf("entry %s has unsupported mode %s", path, entry.Mode)
		}
	}
	return nil
}

// safeEntryName rejects names git itself refuses, so a crafted tree cannot
// write outside the checkout or plant a .git directory.
func safeEntryName(name string) bool {
	return name != "" && name != "." && name != ".." &&
		!strings.ContainsAny(name, "/\x00") && !strings.EqualFold(name, ".git")
}

func writeBlob(repo *git.Repository, h plumbing.Hash, path string, perm os.FileMode) error {
	blob, err := repo.BlobObject(h)
	if err != nil {
		return fmt.Errorf("read blob for %s: %w", path, err)
	}
	src, err := blob.Reader()
	if err != nil {
		return fmt.Errorf("read blob for %s: %w", path, err)
	}
	defer src.Close()
	// O_EXCL: never write through something that is already there.
	dst, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return fmt.Errorf("create file: %w", err)
	}
	if _, err := io.Copy(dst, src); err != nil {
		_ = dst.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	// Chmod undoes the umask so the exec bit matches the commit exactly.
	if err := dst.Chmod(perm); err != nil {
		_ = dst.Close()
		return fmt.Errorf("set mode of %s: %w", path, err)
	}
	if err := dst.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

func writeSymlink(repo *git.Repository, h plumbing.Hash, path string) error {
	blob, err := repo.BlobObject(h)
	if err != nil {
		return fmt.Errorf("read symlink %s: %w", path, err)
	}
	if blob.Size > maxSymlinkTarget {
		return fmt.Errorf("symlink %s target is longer than %d bytes", path, maxSymlinkTarget)
	}
	src, err := blob.Reader()
	if err != nil {
		return fmt.Errorf("read symlink %s: %w", path, err)
	}
	defer src.Close()
	target, err := io.ReadAll(io.LimitReader(src, maxSymlinkTarget))
	if err != nil {
		return fmt.Errorf("read symlink %s: %w", path, err)
	}
	if err := os.Symlink(string(target), path); err != nil {
		return fmt.Errorf("create symlink: %w", err)
	}
	return nil
}

func isDir(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.IsDir()
}
