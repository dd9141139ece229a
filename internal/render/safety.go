package render

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// maxSymlinkHops bounds symlink resolution, as the kernel does, so a loop of
// links fails instead of spinning.
const maxSymlinkHops = 255

// SecureJoin joins rel (slash or OS separated) onto root and returns the
// joined path. It refuses an absolute rel, a rel that climbs out of root with
// "..", and a path any of whose symlinks resolve outside root. Trailing
// components that do not exist are allowed, so callers can report a missing
// file (or ignore it) themselves.
func SecureJoin(root, rel string) (string, error) {
	if filepath.IsAbs(rel) || strings.HasPrefix(rel, "/") {
		return "", fmt.Errorf("path %q: absolute paths are not allowed", rel)
	}
	clean := filepath.Clean(filepath.FromSlash(rel))
	if clean == ".." || strings.HasPrefix(clean, ".."+string(filepath.Separator)) {
		return "", fmt.Errorf("path %q: leaves the repository root", rel)
	}
	absRoot, err := filepath.Abs(root)
	if err != nil {
		return "", fmt.Errorf("repository root %q: %w", root, err)
	}
	joined := filepath.Join(absRoot, clean)
	t, err := newTree(absRoot)
	if err != nil {
		return "", err
	}
	if err := t.checkInside(joined); err != nil {
		return "", fmt.Errorf("path %q: %w", rel, err)
	}
	return joined, nil
}

// tree is a repository checkout: its absolute root and the same root with
// symlinks resolved, which is what containment is checked against.
type tree struct {
	root     string
	realRoot string
}

func newTree(root string) (tree, error) {
	abs, err := filepath.Abs(root)
	if err != nil {
		return tree{}, fmt.Errorf("repository root %q: %w", root, err)
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return tree{}, fmt.Errorf("repository root: %w", err)
	}
	return tree{root: abs, realRoot: real}, nil
}

// rel names p (a path under t.root) relative to the root, with slashes, for
// Manifest.File and error messages.
func (t tree) rel(p string) string {
	r, err := filepath.Rel(t.root, p)
	if err != nil {
		return p
	}
	return filepath.ToSlash(r)
}

// checkInside reports an error if p, once its symlinks are resolved, is not
// inside the root.
func (t tree) checkInside(p string) error {
	real, err := resolvePath(p)
	if err != nil {
		return err
	}
	if !within(t.realRoot, real) {
		return errors.New("resolves outside the repository root")
	}
	return nil
}

// within reports whether p is base or below it; both must be clean and absolute.
func within(base, p string) bool {
	r, err := filepath.Rel(base, p)
	if err != nil {
		return false
	}
	return r != ".." && !strings.HasPrefix(r, ".."+string(filepath.Separator)) && !filepath.IsAbs(r)
}

// resolvePath resolves every symlink along the absolute path p, like
// filepath.EvalSymlinks, except that components which do not exist are kept as
// written instead of failing: a dangling link is still followed, so it cannot
// hide a target outside the root.
func resolvePath(p string) (string, error) {
	sep := string(filepath.Separator)
	parts := strings.Split(filepath.Clean(p), sep)
	cur := sep
	hops := 0
	for i := 0; i < len(parts); i++ {
		comp := parts[i]
		switch comp {
		case "", ".":
			continue
		case "..":
			cur = filepath.Dir(cur)
			continue
		}
		next := filepath.Join(cur, comp)
		fi, err := os.Lstat(next)
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrInvalid) {
			// Nothing below a missing component can be a link: keep the rest.
			return filepath.Join(append([]string{next}, parts[i+1:]...)...), nil
		}
		if err != nil {
			return "", err
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			cur = next
			continue
		}
		if hops++; hops > maxSymlinkHops {
			return "", fmt.Errorf("too many levels of symbolic links at %s", next)
		}
		target, err := os.Readlink(next)
		if err != nil {
			return "", err
		}
		if !filepath.IsAbs(target) {
			target = filepath.Join(cur, target)
		}
		parts = append(strings.Split(filepath.Clean(target), sep), parts[i+1:]...)
		i = -1
		cur = sep
	}
	return cur, nil
}

// walk calls visit for each regular file under dir (inside the root), in
// lexical order. It descends into subdirectories only if recurse, never into
// those skip names, and follows symlinks only while they stay inside the
// root: a link leaving it is an error naming the link.
func (t tree) walk(ctx context.Context, dir string, recurse bool, skip func(name string) bool, visit func(path string, info fs.FileInfo) error) error {
	onPath := map[string]bool{} // real directories being walked, to stop link loops
	var walkDir func(dir, real string) error
	walkDir = func(dir, real string) error {
		onPath[real] = true
		defer delete(onPath, real)
		entries, err := os.ReadDir(dir)
		if err != nil {
			return fmt.Errorf("%s: %w", t.rel(dir), err)
		}
		for _, e := range entries {
			if err := ctx.Err(); err != nil {
				return err
			}
			p := filepath.Join(dir, e.Name())
			info, err := e.Info()
			if err != nil {
				return fmt.Errorf("%s: %w", t.rel(p), err)
			}
			realP := filepath.Join(real, e.Name())
			if info.Mode()&fs.ModeSymlink != 0 {
				if realP, err = resolvePath(p); err != nil {
					return fmt.Errorf("%s: %w", t.rel(p), err)
				}
				if !within(t.realRoot, realP) {
					return fmt.Errorf("%s: symlink points outside the repository root", t.rel(p))
				}
				if info, err = os.Stat(realP); err != nil {
					return fmt.Errorf("%s: broken symlink: %w", t.rel(p), err)
				}
			}
			switch {
			case info.IsDir():
				if !recurse || (skip != nil && skip(e.Name())) || onPath[realP] {
					continue
				}
				if err := walkDir(p, realP); err != nil {
					return err
				}
			case info.Mode().IsRegular():
				if err := visit(p, info); err != nil {
					return err
				}
			}
		}
		return nil
	}
	real, err := resolvePath(dir)
	if err != nil {
		return fmt.Errorf("%s: %w", t.rel(dir), err)
	}
	return walkDir(dir, real)
}

// readFile reads the file at p (inside the root, already checked) if it is
// no larger than max bytes.
func (t tree) readFile(p string, max int64) ([]byte, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", t.rel(p), err)
	}
	defer f.Close()
	// Read one byte past the limit so a file that grows after Stat still fails.
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", t.rel(p), err)
	}
	if int64(len(data)) > max {
		return nil, fmt.Errorf("%s: file is larger than the limit of %d bytes", t.rel(p), max)
	}
	return data, nil
}
