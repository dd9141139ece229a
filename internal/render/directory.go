package render

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/gobwas/glob"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	"github.com/skiffcd/skiff/api/v1alpha1"
)

// renderDirectory reads the plain manifests (YAML, JSON, Jsonnet) in dir.
//
// Like Argo CD, include and exclude are globs with {a,b} alternation matched
// against the path relative to dir, where "*" also matches "/". Hidden
// directories (.git and the like) are never entered.
func renderDirectory(ctx context.Context, req Request, t tree, dir string) ([]Manifest, error) {
	var opts = req.Source.Directory
	if opts == nil {
		opts = &v1alpha1.ApplicationSourceDirectory{}
	}
	include, err := compileGlob("include", opts.Include)
	if err != nil {
		return nil, err
	}
	exclude, err := compileGlob("exclude", opts.Exclude)
	if err != nil {
		return nil, err
	}

	// List the files first: their sizes are known before any is read, so a
	// directory larger than the output limit fails without decoding a byte
	// (decoded objects take several times their text).
	type dirFile struct {
		path, ext string
	}
	var files []dirFile
	var listed int64
	skipHidden := func(name string) bool { return strings.HasPrefix(name, ".") }
	err = t.walk(ctx, dir, opts.Recurse, skipHidden, func(p string, info fs.FileInfo) error {
		ext := filepath.Ext(p)
		switch ext {
		case ".yaml", ".yml", ".json", ".jsonnet":
		default:
			return nil
		}
		relToApp, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		relToApp = filepath.ToSlash(relToApp)
		if exclude != nil && exclude.Match(relToApp) {
			return nil
		}
		if include != nil && !include.Match(relToApp) {
			return nil
		}
		if len(files) >= req.Limits.MaxFiles {
			return fmt.Errorf("%s: more than %d files to read", t.rel(dir), req.Limits.MaxFiles)
		}
		if info.Size() > req.Limits.MaxFileBytes {
			return fmt.Errorf("%s: file is larger than the limit of %d bytes", t.rel(p), req.Limits.MaxFileBytes)
		}
		if ext != ".jsonnet" { // a Jsonnet file's output is counted, not its source
			if listed += info.Size(); listed > req.Limits.MaxOutputBytes {
				return fmt.Errorf("%s: the manifests to read are larger than the limit of %d bytes", t.rel(dir), req.Limits.MaxOutputBytes)
			}
		}
		files = append(files, dirFile{path: p, ext: ext})
		return nil
	})
	if err != nil {
		return nil, err
	}

	var out []Manifest
	budget := req.Limits.MaxOutputBytes // what is left of the output limit
	for _, f := range files {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		name := t.rel(f.path)
		var objs []*unstructured.Unstructured
		if f.ext == ".jsonnet" {
			var n int64
			if objs, n, err = evalJsonnet(ctx, req, t, f.path, budget); err != nil {
				return nil, err
			}
			budget -= n
		} else {
			data, err := t.readFile(f.path, req.Limits.MaxFileBytes)
			if err != nil {
				return nil, err
			}
			if budget -= int64(len(data)); budget < 0 {
				return nil, fmt.Errorf("%s: the manifests read are larger than the limit of %d bytes", t.rel(dir), req.Limits.MaxOutputBytes)
			}
			if f.ext == ".json" {
				objs, err = decodeJSON(name, data)
			} else {
				objs, err = decodeYAML(name, data)
			}
			if err != nil {
				return nil, err
			}
		}
		for _, o := range objs {
			out = append(out, Manifest{Object: o, File: name})
		}
	}
	return out, nil
}

// compileGlob compiles an Argo CD include/exclude pattern; "" matches nothing
// and yields nil.
func compileGlob(field, pattern string) (glob.Glob, error) {
	if pattern == "" {
		return nil, nil
	}
	g, err := glob.Compile(pattern)
	if err != nil {
		return nil, fmt.Errorf("directory %s pattern %q: %w", field, pattern, err)
	}
	return g, nil
}

// decodeYAML decodes a multi-document YAML file. Empty documents and those
// holding only comments are skipped. Documents are numbered from 1 in errors.
func decodeYAML(name string, data []byte) ([]*unstructured.Unstructured, error) {
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	var out []*unstructured.Unstructured
	for doc := 1; ; doc++ {
		chunk, err := r.Read()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%s: document %d: %w", name, doc, err)
		}
		// The YAML decoder refuses excessive aliasing (billion laughs) early,
		// before expanding it.
		j, err := yaml.YAMLToJSON(chunk)
		if err != nil {
			return nil, fmt.Errorf("%s: document %d: %w", name, doc, err)
		}
		objs, err := decodeObjects(j)
		if err != nil {
			return nil, fmt.Errorf("%s: document %d: %w", name, doc, err)
		}
		out = append(out, objs...)
	}
}

// decodeJSON decodes a JSON file holding one object (possibly a List).
func decodeJSON(name string, data []byte) ([]*unstructured.Unstructured, error) {
	objs, err := decodeObjects(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return objs, nil
}

// decodeObjects decodes one JSON document: null (nothing), an object, or an
// array of objects. Lists (kind: List, or any *List with items) are expanded.
func decodeObjects(data []byte) ([]*unstructured.Unstructured, error) {
	var v any
	if err := utiljson.Unmarshal(data, &v); err != nil {
		return nil, err
	}
	switch v := v.(type) {
	case nil:
		return nil, nil
	case map[string]any:
		return expandObject(v)
	case []any:
		var out []*unstructured.Unstructured
		for i, item := range v {
			m, ok := item.(map[string]any)
			if !ok {
				return nil, fmt.Errorf("item %d is not an object", i)
			}
			objs, err := expandObject(m)
			if err != nil {
				return nil, fmt.Errorf("item %d: %w", i, err)
			}
			out = append(out, objs...)
		}
		return out, nil
	default:
		return nil, fmt.Errorf("not a Kubernetes object but a %T", v)
	}
}

// expandObject checks that m is a Kubernetes object and expands it if it is a
// list.
func expandObject(m map[string]any) ([]*unstructured.Unstructured, error) {
	kind, _ := m["kind"].(string)
	items, isList := m["items"].([]any)
	if !strings.HasSuffix(kind, "List") || !isList {
		if err := checkTypeMeta(m); err != nil {
			return nil, err
		}
		return []*unstructured.Unstructured{{Object: m}}, nil
	}
	out := make([]*unstructured.Unstructured, 0, len(items))
	for i, item := range items {
		im, ok := item.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("%s item %d is not an object", kind, i)
		}
		if err := checkTypeMeta(im); err != nil {
			return nil, fmt.Errorf("%s item %d: %w", kind, i, err)
		}
		out = append(out, &unstructured.Unstructured{Object: im})
	}
	return out, nil
}

func checkTypeMeta(m map[string]any) error {
	for _, field := range []string{"apiVersion", "kind"} {
		if s, _ := m[field].(string); s == "" {
			return fmt.Errorf("object has no %s", field)
		}
	}
	// Kubernetes refuses such objects at apply time; saying so at render
	// time names the file instead of failing half-way through a sync.
	meta, ok := m["metadata"].(map[string]any)
	if !ok {
		return fmt.Errorf("object has no metadata object")
	}
	name, _ := meta["name"].(string)
	generateName, _ := meta["generateName"].(string)
	if name == "" && generateName == "" {
		return fmt.Errorf("object has no metadata.name")
	}
	return nil
}
