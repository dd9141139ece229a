package appset

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"strconv"
	"strings"

	"github.com/gobwas/glob"
	"sigs.k8s.io/yaml"

	"github.com/skiffcd/skiff/api/v1alpha1"
)

// DirTree serves every repository and revision from one directory, as
// commit sha, for a checkout the caller made (and for tests).
func DirTree(dir, sha string) GitTrees {
	return func(string, string) (fs.FS, string, error) { return os.DirFS(dir), sha, nil }
}

// git gives one set per matching directory or, when no directories are
// given, one per object of the matching files.
func (g *generator) git(gg *v1alpha1.GitGenerator, outer Params) ([]Params, error) {
	if g.in.Git == nil {
		return nil, errors.New("no git repositories are available")
	}
	if len(gg.Directories) == 0 && len(gg.Files) == 0 {
		return nil, errors.New("a git generator needs directories or files")
	}
	tree, sha, err := g.tree(gg.RepoURL, gg.Revision)
	if err != nil {
		return nil, fmt.Errorf("reading %s at %q: %w", gg.RepoURL, gg.Revision, err)
	}
	var out []Params
	if len(gg.Directories) > 0 {
		dirs, err := matchDirectories(tree, gg.Directories)
		if err != nil {
			return nil, err
		}
		for _, d := range dirs {
			p, err := g.withValues(g.pathParams(d, "", gg.PathParamPrefix, sha), gg.Values, outer)
			if err != nil {
				return nil, fmt.Errorf("directory %s: %w", d, err)
			}
			out = append(out, p)
		}
		return out, nil
	}
	files, err := matchFiles(tree, gg.Files)
	if err != nil {
		return nil, err
	}
	for _, f := range files {
		sets, err := g.fileParams(tree, f, gg.PathParamPrefix, sha)
		if err != nil {
			return nil, fmt.Errorf("file %s: %w", f, err)
		}
		for _, p := range sets {
			if p, err = g.withValues(p, gg.Values, outer); err != nil {
				return nil, fmt.Errorf("file %s: %w", f, err)
			}
			out = append(out, p)
		}
	}
	return out, nil
}

// matchDirectories lists the tree's directories (not the root, none under
// a hidden one) that an included pattern matches and no excluded one does;
// patterns are path.Match globs, as in Argo CD, so "*" stays within one
// segment.
func matchDirectories(tree fs.FS, items []v1alpha1.GitDirectoryGeneratorItem) ([]string, error) {
	for _, it := range items {
		if _, err := path.Match(it.Path, ""); err != nil {
			return nil, fmt.Errorf("directory pattern %q: %w", it.Path, err)
		}
	}
	var out []string
	err := fs.WalkDir(tree, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() || p == "." {
			return nil
		}
		if strings.HasPrefix(d.Name(), ".") {
			return fs.SkipDir
		}
		include, exclude := false, false
		for _, it := range items {
			if ok, _ := path.Match(it.Path, p); ok {
				include = include || !it.Exclude
				exclude = exclude || it.Exclude
			}
		}
		if include && !exclude {
			out = append(out, p)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("listing directories: %w", err)
	}
	return out, nil
}

// filePattern is a git pathspec: a glob whose "*" and "**" match across
// "/", or a leading directory of the path.
type filePattern struct {
	glob    glob.Glob
	dir     string
	exclude bool
}

func (f filePattern) match(p string) bool {
	return f.glob.Match(p) || strings.HasPrefix(p, f.dir)
}

// matchFiles lists the tree's files that an included pattern matches and no
// excluded one does, in path order. Patterns match as git's pathspecs do
// (Argo CD lists files with `git ls-files -- <pattern>`).
func matchFiles(tree fs.FS, items []v1alpha1.GitFileGeneratorItem) ([]string, error) {
	patterns := make([]filePattern, len(items))
	for i, it := range items {
		g, err := glob.Compile(it.Path)
		if err != nil {
			return nil, fmt.Errorf("file pattern %q: %w", it.Path, err)
		}
		patterns[i] = filePattern{glob: g, dir: strings.TrimSuffix(it.Path, "/") + "/", exclude: it.Exclude}
	}
	var out []string
	err := fs.WalkDir(tree, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p != "." && d.Name() == ".git" {
				return fs.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() {
			return nil
		}
		include, exclude := false, false
		for _, pt := range patterns {
			if pt.match(p) {
				include = include || !pt.exclude
				exclude = exclude || pt.exclude
			}
		}
		if include && !exclude {
			out = append(out, p)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("listing files: %w", err)
	}
	return out, nil
}

// pathParams are the parameters of a directory (file "") or of a file in
// it, under prefix when set: path, path.basename, path.basenameNormalized,
// path[n] (and path.filename, path.filenameNormalized for a file) and
// commitSHA; nested as .path.path, .path.segments... with goTemplate.
func (g *generator) pathParams(dir, file, prefix, sha string) Params {
	base := path.Base(dir)
	if g.opts.GoTemplate {
		pp := map[string]any{
			"path":               dir,
			"basename":           base,
			"basenameNormalized": sanitizeName(base),
			"segments":           strings.Split(dir, "/"),
		}
		if file != "" {
			pp["filename"] = file
			pp["filenameNormalized"] = sanitizeName(file)
		}
		if prefix != "" {
			return Params{prefix: map[string]any{"path": pp, "commitSHA": sha}}
		}
		return Params{"path": pp, "commitSHA": sha}
	}
	name, shaName := "path", "commitSHA"
	if prefix != "" {
		name, shaName = prefix+".path", prefix+".commitSHA"
	}
	p := Params{
		shaName:                      sha,
		name:                         dir,
		name + ".basename":           base,
		name + ".basenameNormalized": sanitizeName(base),
	}
	if file != "" {
		p[name+".filename"] = file
		p[name+".filenameNormalized"] = sanitizeName(file)
	}
	for i, seg := range strings.Split(dir, "/") {
		if seg != "" {
			p[name+"["+strconv.Itoa(i)+"]"] = seg
		}
	}
	return p
}

// fileParams reads a JSON or YAML file: an object is one set, a list of
// objects one set each. Keys are flattened ("a.b") without goTemplate.
func (g *generator) fileParams(tree fs.FS, file, prefix, sha string) ([]Params, error) {
	data, err := fs.ReadFile(tree, file)
	if err != nil {
		return nil, err
	}
	var objects []map[string]any
	if err := yaml.Unmarshal(data, &objects); err != nil {
		var one map[string]any
		if err := yaml.Unmarshal(data, &one); err != nil {
			return nil, fmt.Errorf("not a JSON or YAML object or list of objects: %w", err)
		}
		objects = []map[string]any{one}
	}
	var out []Params
	for _, obj := range objects {
		var p Params
		if g.opts.GoTemplate {
			p = Params{}
			for k, v := range obj {
				p[k] = v
			}
		} else {
			p = Params{}
			for k, v := range flat(obj) {
				p[k] = v
			}
		}
		for k, v := range g.pathParams(path.Dir(file), path.Base(file), prefix, sha) {
			p[k] = v
		}
		out = append(out, p)
	}
	return out, nil
}
