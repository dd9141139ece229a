package render

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/google/go-jsonnet"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/skiffcd/skiff/api/v1alpha1"
)

// evalJsonnet evaluates the Jsonnet file p with the source's ext vars, TLAs
// and library paths, like Argo CD. Its output may be an object, a List or an
// array of objects, of at most maxBytes; it returns the objects and the
// output's size. Imports are read only from inside the root.
//
// go-jsonnet cannot be interrupted: the evaluation runs in a worker, killed
// if ctx ends first.
func evalJsonnet(ctx context.Context, req Request, t tree, p string, maxBytes int64) ([]*unstructured.Unstructured, int64, error) {
	name := t.rel(p)
	outs, err := isolate(ctx, req, job{Kind: kindJsonnet, Request: req, File: p, MaxOutputBytes: maxBytes})
	if err != nil {
		return nil, 0, fmt.Errorf("%s: jsonnet evaluation: %w", name, err)
	}
	if len(outs) != 1 {
		return nil, 0, fmt.Errorf("%s: jsonnet evaluation gave %d outputs", name, len(outs))
	}
	objs, err := decodeObjects(outs[0].Text)
	if err != nil {
		return nil, 0, fmt.Errorf("%s: %w", name, err)
	}
	return objs, int64(len(outs[0].Text)), nil
}

// jsonnetEvaluate is the worker's side of evalJsonnet.
func jsonnetEvaluate(j job) ([]jobOutput, error) {
	req := j.Request
	t, err := newTree(req.Root)
	if err != nil {
		return nil, err
	}
	var opts v1alpha1.ApplicationSourceJsonnet
	if req.Source.Directory != nil {
		opts = req.Source.Directory.Jsonnet
	}
	im := &rootImporter{tree: t, maxBytes: effectiveLimits(req.Limits).MaxFileBytes, cache: map[string]*importEntry{}}
	for _, lib := range opts.Libs {
		dir, err := SecureJoin(t.root, lib)
		if err != nil {
			return nil, fmt.Errorf("jsonnet library path: %w", err)
		}
		im.jpaths = append(im.jpaths, dir)
	}

	vm := jsonnet.MakeVM()
	vm.Importer(im)
	for _, v := range opts.ExtVars {
		if v.Code {
			vm.ExtCode(v.Name, v.Value)
		} else {
			vm.ExtVar(v.Name, v.Value)
		}
	}
	for _, v := range opts.TLAs {
		if v.Code {
			vm.TLACode(v.Name, v.Value)
		} else {
			vm.TLAVar(v.Name, v.Value)
		}
	}
	// The file itself is read through the importer too: root-checked and size-bounded.
	out, err := vm.EvaluateFile(j.File)
	if err != nil {
		return nil, err
	}
	return []jobOutput{{Name: t.rel(j.File), Text: []byte(out)}}, nil
}

// rootImporter resolves imports like jsonnet's FileImporter (next to the
// importing file, then the library paths, the last one first) but refuses
// any path that leaves the root, lexically or through a symlink.
type rootImporter struct {
	tree     tree
	jpaths   []string
	maxBytes int64
	cache    map[string]*importEntry
}

type importEntry struct {
	contents jsonnet.Contents
	exists   bool
}

// Import implements jsonnet.Importer.
func (im *rootImporter) Import(importedFrom, importedPath string) (jsonnet.Contents, string, error) {
	dirs := []string{filepath.Dir(importedFrom)}
	for i := len(im.jpaths) - 1; i >= 0; i-- {
		dirs = append(dirs, im.jpaths[i])
	}
	for _, dir := range dirs {
		p := filepath.Clean(importedPath)
		if !filepath.IsAbs(p) {
			p = filepath.Join(dir, importedPath)
		}
		e, err := im.load(p)
		if err != nil {
			return jsonnet.Contents{}, "", fmt.Errorf("import %q: %w", importedPath, err)
		}
		if e.exists {
			return e.contents, p, nil
		}
	}
	return jsonnet.Contents{}, "", fmt.Errorf("import %q: not found next to %s or in the library paths", importedPath, im.tree.rel(importedFrom))
}

func (im *rootImporter) load(p string) (*importEntry, error) {
	if e, ok := im.cache[p]; ok {
		return e, nil
	}
	if !within(im.tree.root, p) {
		return nil, errors.New("leaves the repository root")
	}
	if err := im.tree.checkInside(p); err != nil {
		return nil, fmt.Errorf("%s: %w", im.tree.rel(p), err)
	}
	e := &importEntry{}
	if info, err := os.Stat(p); errors.Is(err, fs.ErrNotExist) || (err == nil && info.IsDir()) {
		im.cache[p] = e
		return e, nil
	}
	data, err := im.tree.readFile(p, im.maxBytes)
	if err != nil {
		return nil, err
	}
	e.exists, e.contents = true, jsonnet.MakeContentsRaw(data)
	im.cache[p] = e
	return e, nil
}
