package render

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Render renders req's source into manifests, as Argo CD's repo server would.
//
// It applies req.Limits (each zero field takes its DefaultLimits value; the
// timeout bounds the whole render through ctx), refuses an application path
// outside req.Root, picks the renderer with Detect and runs it. The result is
// checked: its total JSON size must not exceed MaxOutputBytes and no two
// objects may share group, kind, namespace and name. Manifests are sorted
// stably by file; within a file they keep the renderer's order (document
// order for plain files, Kustomize's build order).
//
// Paths in errors are relative to the root they are under: where the server
// keeps its checkouts is not the application's business.
func Render(ctx context.Context, req Request) ([]Manifest, error) {
	req.Limits = effectiveLimits(req.Limits)
	out, err := render(ctx, req)
	if err != nil {
		return nil, relativePaths(err, req)
	}
	return out, nil
}

func render(ctx context.Context, req Request) ([]Manifest, error) {
	caller := ctx
	ctx, cancel := context.WithTimeout(ctx, req.Limits.Timeout)
	defer cancel()

	t, err := newTree(req.Root)
	if err != nil {
		return nil, err
	}
	req.Root = t.root
	dir, err := appDir(req)
	if err != nil {
		return nil, err
	}
	kind, err := Detect(req)
	if err != nil {
		return nil, err
	}

	var out []Manifest
	switch kind {
	case KindHelm:
		out, err = renderHelm(ctx, req, dir)
	case KindKustomize:
		out, err = renderKustomize(ctx, req, t, dir)
	case KindDirectory:
		out, err = renderDirectory(ctx, req, t, dir)
	default:
		err = fmt.Errorf("renderer %q is not supported", kind)
	}
	if err == nil {
		err = ctx.Err()
	}
	if err != nil {
		ctxErr := ctx.Err()
		switch {
		case ctxErr == nil:
			return nil, err
		case caller.Err() == nil: // the render's own deadline
			return nil, fmt.Errorf("render of %s stopped at its deadline of %s: %w", kind, req.Limits.Timeout, err)
		case errors.Is(err, ctxErr):
			return nil, fmt.Errorf("render of %s: %w", kind, err)
		default:
			return nil, fmt.Errorf("render of %s stopped: %w (%w)", kind, ctxErr, err)
		}
	}
	if err := checkOutput(out, req.Limits.MaxOutputBytes); err != nil {
		return nil, err
	}
	slices.SortStableFunc(out, func(a, b Manifest) int { return cmp.Compare(a.File, b.File) })
	return out, nil
}

// relativePaths rewrites err's message so that paths under the checkouts
// the render read (req.Root, req.RefRoots) are relative to their root, as
// some library errors (go-jsonnet's, the OS's) name files absolutely.
// errors.Is and errors.As still see the original.
func relativePaths(err error, req Request) error {
	var roots []string
	for _, root := range append([]string{req.Root}, slices.Collect(maps.Values(req.RefRoots))...) {
		if root == "" {
			continue
		}
		if abs, err := filepath.Abs(root); err == nil {
			roots = append(roots, abs)
		}
		if real, err := filepath.EvalSymlinks(root); err == nil {
			roots = append(roots, real)
		}
	}
	// Longest first: a root inside another is rewritten before it.
	slices.SortFunc(roots, func(a, b string) int { return cmp.Compare(len(b), len(a)) })
	msg := err.Error()
	for _, root := range roots {
		if root == string(filepath.Separator) {
			continue
		}
		msg = strings.ReplaceAll(msg, root+string(filepath.Separator), "")
		msg = strings.ReplaceAll(msg, root, ".")
	}
	if msg == err.Error() {
		return err
	}
	return &relativePathError{msg: msg, err: err}
}

type relativePathError struct {
	msg string
	err error
}

func (e *relativePathError) Error() string { return e.msg }
func (e *relativePathError) Unwrap() error { return e.err }

func effectiveLimits(l Limits) Limits {
	if l.MaxFileBytes <= 0 {
		l.MaxFileBytes = DefaultLimits.MaxFileBytes
	}
	if l.MaxFiles <= 0 {
		l.MaxFiles = DefaultLimits.MaxFiles
	}
	if l.MaxOutputBytes <= 0 {
		l.MaxOutputBytes = DefaultLimits.MaxOutputBytes
	}
	if l.Timeout <= 0 {
		l.Timeout = DefaultLimits.Timeout
	}
	return l
}

// appDir returns the application directory, refusing one outside the root.
func appDir(req Request) (string, error) {
	dir, err := SecureJoin(req.Root, req.Path)
	if err != nil {
		return "", fmt.Errorf("application path: %w", err)
	}
	info, err := os.Stat(dir)
	if err != nil {
		return "", fmt.Errorf("application path %q: %w", req.Path, err)
	}
	if !info.IsDir() {
		return "", fmt.Errorf("application path %q is not a directory", req.Path)
	}
	return dir, nil
}

// objectKey identifies an object in a cluster, for duplicate detection.
type objectKey struct {
	group, kind, namespace, name string
}

func (k objectKey) String() string {
	gk := k.kind
	if k.group != "" {
		gk = k.kind + "." + k.group
	}
	if k.namespace != "" {
		return fmt.Sprintf("%s %s/%s", gk, k.namespace, k.name)
	}
	return fmt.Sprintf("%s %s", gk, k.name)
}

// checkOutput enforces the output size limit and refuses duplicate objects,
// which the cluster would silently collapse into one.
func checkOutput(out []Manifest, maxBytes int64) error {
	var total int64
	seen := make(map[objectKey]string, len(out))
	for _, m := range out {
		data, err := json.Marshal(m.Object.Object)
		if err != nil {
			return fmt.Errorf("%s: %w", m.File, err)
		}
		total += int64(len(data))
		if total > maxBytes {
			return fmt.Errorf("rendered manifests are larger than the limit of %d bytes", maxBytes)
		}
		gvk := m.Object.GroupVersionKind()
		key := objectKey{group: gvk.Group, kind: gvk.Kind, namespace: m.Object.GetNamespace(), name: m.Object.GetName()}
		if first, dup := seen[key]; dup {
			return fmt.Errorf("duplicate object %s: defined in %s and in %s", key, first, m.File)
		}
		seen[key] = m.File
	}
	return nil
}

// CheckDuplicates refuses two objects with the same group, kind, namespace
// and name, naming the files of both; the repo server runs it over the
// combined output of several sources.
func CheckDuplicates(manifests []Manifest) error {
	return checkOutput(manifests, math.MaxInt64)
}
