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
// Symlinks stay symlinks and executable files keep their exec bit. Blobs
// are streamed to their files, never held whole in memory, and a file
// larger than MaxFileBytes (or a tree larger than MaxCheckoutBytes) fails
// the checkout, naming it.
//
// The directory is shared by every caller: treat it as read-only. Trees no
// caller holds may be removed (see Options.MaxCachedCheckouts): read one
// under Acquire.
func (c *Cache) Checkout(ctx context.Context, rawURL, sha string) (string, error) {
	dir, release, err := c.Acquire(ctx, rawURL, sha)
	if err != nil {
		return "", err
	}
	release()
	return dir, nil
}

// Acquire is Checkout, holding the tree until release is called: a held
// tree is never removed. release may be called once.
func (c *Cache) Acquire(ctx context.Context, rawURL, sha string) (dir string, release func(), err error) {
	sha = strings.ToLower(strings.TrimSpace(sha))
	if len(sha) != 40 || !isHex(sha) {
		return "", nil, newRepoError("checkout", rawURL, Credentials{}, sha, errors.New("want a full 40 character commit SHA"))
	}
	// Each pass either holds the tree or finds it evicted by another
	// caller between its checkout and its hold, which a retry fixes.
	for range 3 {
		if dir, release, ok := c.trees.hold(c.treeDir(rawURL, sha)); ok {
			return dir, release, nil
		}
		dir, size, err := c.checkout(ctx, rawURL, sha)
		if err != nil {
			return "", nil, newRepoError("checkout", rawURL, Credentials{}, sha, err)
		}
		if release, ok := c.trees.add(dir, size); ok {
			return dir, release, nil
		}
	}
	return "", nil, newRepoError("checkout", rawURL, Credentials{}, sha, errors.New("the tree was removed as soon as it was written; the checkout cache is too small"))
}

// treeDir is where the tree of sha is materialized.
func (c *Cache) treeDir(rawURL, sha string) string {
	return filepath.Join(c.dir, repoKey(rawURL), "trees", sha)
}

// checkout writes the tree of sha unless it is on disk, and returns its
// directory and size (-1 when it was already there).
func (c *Cache) checkout(ctx context.Context, rawURL, sha string) (string, int64, error) {
	r := c.entry(rawURL)
	treesDir := filepath.Join(r.dir, "trees")
	final := filepath.Join(treesDir, sha)
	if isDir(final) {
		return final, -1, nil
	}

	r.mu.Lock()
	defer r.mu.Unlock()
	if isDir(final) { // materialized while we waited
		return final, -1, nil
	}
	repo, err := r.open(false)
	if err != nil {
		return "", 0, err
	}
	commit, err := repo.CommitObject(plumbing.NewHash(sha))
	if errors.Is(err, plumbing.ErrObjectNotFound) {
		return "", 0, fmt.Errorf("%w: commit is not in the cache; resolve it first", ErrRevisionNotFound)
	}
	if err != nil {
		return "", 0, fmt.Errorf("read commit: %w", err)
	}
	tree, err := commit.Tree()
	if err != nil {
		return "", 0, fmt.Errorf("read tree: %w", err)
	}

	if err := os.MkdirAll(treesDir, 0o755); err != nil {
		return "", 0, fmt.Errorf("create trees directory: %w", err)
	}
	tmp, err := os.MkdirTemp(treesDir, tmpTreePrefix+sha+"-")
	if err != nil {
		return "", 0, fmt.Errorf("create temporary tree directory: %w", err)
	}
	keep := false
	defer func() {
		if !keep {
			_ = os.RemoveAll(tmp)
		}
	}()
	tw := &treeWriter{repo: repo, root: tmp, maxFile: c.opts.maxFileBytes(), maxTotal: c.opts.maxCheckoutBytes()}
	if err := tw.write(ctx, tree, tmp, 0); err != nil {
		return "", 0, err
	}
	if err := os.Chmod(tmp, 0o755); err != nil { // MkdirTemp creates 0700
		return "", 0, fmt.Errorf("set tree permissions: %w", pathError(err))
	}
	if err := os.Rename(tmp, final); err != nil {
		if isDir(final) { // another process won the race; its tree is identical
			return final, -1, nil
		}
		return "", 0, fmt.Errorf("move tree into place: %w", pathError(err))
	}
	keep = true
	c.checkouts.Add(1)
	return final, tw.total, nil
}

// tmpTreePrefix starts the names of trees being written.
const tmpTreePrefix = ".tmp-"

// treeWriter writes one commit's tree under root, counting its bytes.
// Errors name entries relative to root: the cache's location is not the
// business of whoever reads them.
type treeWriter struct {
	repo              *git.Repository
	root              string
	maxFile, maxTotal int64
	total             int64
}

func (w *treeWriter) rel(p string) string {
	r, err := filepath.Rel(w.root, p)
	if err != nil {
		return filepath.Base(p)
	}
	return filepath.ToSlash(r)
}

func (w *treeWriter) write(ctx context.Context, tree *object.Tree, dir string, depth int) error {
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
			sub, err := w.repo.TreeObject(entry.Hash)
			if err != nil {
				return fmt.Errorf("read tree %s: %w", w.rel(path), err)
			}
			if err := os.Mkdir(path, 0o755); err != nil {
				return fmt.Errorf("create directory %s: %w", w.rel(path), pathError(err))
			}
			if err := w.write(ctx, sub, path, depth+1); err != nil {
				return err
			}
		case filemode.Regular, filemode.Deprecated:
			if err := w.writeBlob(entry.Hash, path, 0o644); err != nil {
				return err
			}
		case filemode.Executable:
			if err := w.writeBlob(entry.Hash, path, 0o755); err != nil {
				return err
			}
		case filemode.Symlink:
			if err := w.writeSymlink(entry.Hash, path); err != nil {
				return err
			}
		case filemode.Submodule:
			// Submodules are not fetched; git leaves an empty directory too.
			if err := os.Mkdir(path, 0o755); err != nil {
				return fmt.Errorf("create submodule directory %s: %w", w.rel(path), pathError(err))
			}
		default:
			return fmt.Errorf("entry %s has unsupported mode %s", w.rel(path), entry.Mode)
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

// writeBlob streams the blob h into a new file at path, refusing it first
// if its size (known from the object header) is over the limits.
func (w *treeWriter) writeBlob(h plumbing.Hash, path string, perm os.FileMode) error {
	name := w.rel(path)
	blob, err := w.repo.BlobObject(h)
	if err != nil {
		return fmt.Errorf("read blob for %s: %w", name, err)
	}
	if blob.Size > w.maxFile {
		return fmt.Errorf("%s: file of %d bytes is %w of %d bytes", name, blob.Size, ErrTooLarge, w.maxFile)
	}
	if w.total += blob.Size; w.total > w.maxTotal {
		return fmt.Errorf("%s: the commit's files are %w of %d bytes", name, ErrTooLarge, w.maxTotal)
	}
	src, err := blob.Reader()
	if err != nil {
		return fmt.Errorf("read blob for %s: %w", name, err)
	}
	defer src.Close()
	// O_EXCL: never write through something that is already there.
	dst, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return fmt.Errorf("create %s: %w", name, pathError(err))
	}
	// One byte past the size: a blob that inflates to more than its header
	// said fails instead of filling the disk.
	n, err := io.Copy(dst, io.LimitReader(src, blob.Size+1))
	if err == nil && n != blob.Size {
		err = fmt.Errorf("blob is %d bytes, its header says %d", n, blob.Size)
	}
	if err != nil {
		_ = dst.Close()
		return fmt.Errorf("write %s: %w", name, pathError(err))
	}
	// Chmod undoes the umask so the exec bit matches the commit exactly.
	if err := dst.Chmod(perm); err != nil {
		_ = dst.Close()
		return fmt.Errorf("set mode of %s: %w", name, pathError(err))
	}
	if err := dst.Close(); err != nil {
		return fmt.Errorf("write %s: %w", name, pathError(err))
	}
	return nil
}

func (w *treeWriter) writeSymlink(h plumbing.Hash, path string) error {
	name := w.rel(path)
	blob, err := w.repo.BlobObject(h)
	if err != nil {
		return fmt.Errorf("read symlink %s: %w", name, err)
	}
	if blob.Size > maxSymlinkTarget {
		return fmt.Errorf("symlink %s target is longer than %d bytes", name, maxSymlinkTarget)
	}
	src, err := blob.Reader()
	if err != nil {
		return fmt.Errorf("read symlink %s: %w", name, err)
	}
	defer src.Close()
	target, err := io.ReadAll(io.LimitReader(src, maxSymlinkTarget))
	if err != nil {
		return fmt.Errorf("read symlink %s: %w", name, err)
	}
	if err := os.Symlink(string(target), path); err != nil {
		return fmt.Errorf("create symlink %s: %w", name, pathError(err))
	}
	return nil
}

// pathError drops the absolute path from a file system error, keeping the
// operation and the cause: callers name the file themselves.
func pathError(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return fmt.Errorf("%s: %w", pe.Op, pe.Err)
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		return fmt.Errorf("%s: %w", le.Op, le.Err)
	}
	return err
}

func isDir(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.IsDir()
}
