package render

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"helm.sh/helm/v4/pkg/chart/common"
	commonutil "helm.sh/helm/v4/pkg/chart/common/util"
	"helm.sh/helm/v4/pkg/chart/loader/archive"
	chart "helm.sh/helm/v4/pkg/chart/v2"
	chartloader "helm.sh/helm/v4/pkg/chart/v2/loader"
	chartutil "helm.sh/helm/v4/pkg/chart/v2/util"
	"helm.sh/helm/v4/pkg/engine"
	"helm.sh/helm/v4/pkg/ignore"
	"helm.sh/helm/v4/pkg/strvals"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	"github.com/skiffcd/skiff/api/v1alpha1"
	"github.com/skiffcd/skiff/internal/hook"
)

// helmMaxDependencyDepth stops file:// dependency cycles.
const helmMaxDependencyDepth = 10

// renderHelm renders the chart in dir (absolute, inside req.Root) as `helm
// template` does for Argo CD: CRDs from crds/ first (unless skipCrds), then
// every template object, hooks included with their annotations (test hooks
// dropped with skipTests). Dependencies to download are fetched here; the
// template engine, which cannot be interrupted, runs in a worker.
func renderHelm(ctx context.Context, req Request, dir string) ([]Manifest, error) {
	req.Limits = effectiveLimits(req.Limits)
	ctx, cancel := context.WithTimeout(ctx, req.Limits.Timeout)
	defer cancel()
	out, err := helmRender(ctx, req, dir)
	if err != nil {
		return nil, fmt.Errorf("helm: %w", err)
	}
	return out, nil
}

func helmRender(ctx context.Context, req Request, dir string) ([]Manifest, error) {
	relDir, err := helmRelDir(req.Root, dir)
	if err != nil {
		return nil, err
	}
	charts, err := helmFetchDependencies(ctx, req, dir)
	if err != nil {
		return nil, err
	}
	outs, err := isolate(ctx, req, job{Kind: KindHelm, Request: req, Dir: dir, Charts: charts, MaxOutputBytes: req.Limits.MaxOutputBytes})
	if err != nil {
		return nil, err
	}
	skipTests := req.Source.Helm != nil && req.Source.Helm.SkipTests
	var out []Manifest
	for _, o := range outs {
		objs, err := helmDecode(string(o.Text))
		if err != nil {
			return nil, fmt.Errorf("template %s: %w", o.Name, err)
		}
		for _, obj := range objs {
			if !o.CRD && skipTests && hook.IsHelmTest(obj) {
				continue
			}
			out = append(out, Manifest{Object: obj, File: path.Join(relDir, o.Name)})
		}
	}
	return out, nil
}

// helmRelDir is the chart directory relative to the root, with slashes.
func helmRelDir(root, dir string) (string, error) {
	relDir, err := filepath.Rel(root, dir)
	if err != nil || relDir == ".." || strings.HasPrefix(relDir, ".."+string(filepath.Separator)) {
		return "", errors.New("chart directory is outside the source root")
	}
	return filepath.ToSlash(relDir), nil
}

// helmTemplate is the worker's side of a Helm render: it loads the chart
// (dependencies from job.Charts), merges the values and runs the template
// engine. Its outputs are the CRDs, then the templates sorted by name.
func helmTemplate(ctx context.Context, j job) ([]jobOutput, error) {
	req, dir := j.Request, j.Dir
	lim := effectiveLimits(req.Limits)
	opts := v1alpha1.ApplicationSourceHelm{}
	if req.Source.Helm != nil {
		opts = *req.Source.Helm
	}
	relDir, err := helmRelDir(req.Root, dir)
	if err != nil {
		return nil, err
	}
	downloaded := func(_ context.Context, repoURL, chart, version string) (string, error) {
		if d, ok := j.Charts[dependencyKey(repoURL, chart, version)]; ok {
			return d, nil
		}
		return "", errors.New("was not downloaded before the render")
	}
	chrt, err := helmLoadChart(ctx, downloaded, req.Root, dir, lim, 0)
	if err != nil {
		return nil, err
	}
	vals, err := helmValues(req, opts, relDir, lim)
	if err != nil {
		return nil, err
	}
	caps, err := helmCapabilities(req, opts)
	if err != nil {
		return nil, err
	}
	if kv := chrt.Metadata.KubeVersion; kv != "" && !chartutil.IsCompatibleRange(kv, caps.KubeVersion.String()) {
		return nil, fmt.Errorf("chart requires kubeVersion %s, which Kubernetes %s does not satisfy", kv, caps.KubeVersion.Version)
	}
	if err := chartutil.ProcessDependencies(chrt, vals); err != nil {
		return nil, fmt.Errorf("process chart dependencies: %w", err)
	}
	relOpts := common.ReleaseOptions{
		Name:      helmFirst(opts.ReleaseName, req.AppName),
		Namespace: helmFirst(opts.Namespace, req.Namespace),
		Revision:  1,
		IsInstall: true,
	}
	renderVals, err := commonutil.ToRenderValuesWithSchemaValidation(chrt, vals, relOpts, caps, opts.SkipSchemaValidation)
	if err != nil {
		return nil, fmt.Errorf("values: %w", err)
	}
	files, err := engine.Engine{}.RenderWithContext(ctx, chrt, renderVals)
	if err != nil {
		return nil, err
	}

	var outs []jobOutput
	if !opts.SkipCrds {
		for _, c := range chrt.CRDObjects() {
			outs = append(outs, jobOutput{Name: helmChartRelative(c.Filename), Text: c.File.Data, CRD: true})
		}
	}
	names := make([]string, 0, len(files))
	for name := range files {
		base := path.Base(name)
		if strings.HasPrefix(base, "_") || base == "NOTES.txt" {
			continue
		}
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		outs = append(outs, jobOutput{Name: helmChartRelative(name), Text: []byte(files[name])})
	}
	return outs, nil
}

// dependencyKey names a downloaded dependency in job.Charts.
func dependencyKey(repoURL, chart, version string) string {
	return repoURL + "\x00" + chart + "\x00" + version
}

// helmFetchDependencies downloads, through req.FetchDependency, the
// dependencies that the chart in dir, or a file:// chart it names, lists
// and does not vendor in charts/, and returns their directories by
// dependencyKey. A chart that lists no dependency costs a read of
// Chart.yaml.
func helmFetchDependencies(ctx context.Context, req Request, dir string) (map[string]string, error) {
	if !helmListsDependencies(dir, req.Limits.MaxFileBytes) {
		return nil, nil
	}
	fetched := map[string]string{}
	fetch := func(ctx context.Context, repoURL, chart, version string) (string, error) {
		if req.FetchDependency == nil {
			return "", fmt.Errorf("repository %s: downloading chart dependencies is not permitted here; vendor it in charts/", repoURL)
		}
		d, err := req.FetchDependency(ctx, repoURL, chart, version)
		if err != nil {
			return "", err
		}
		fetched[dependencyKey(repoURL, chart, version)] = d
		return d, nil
	}
	if _, err := helmLoadChart(ctx, fetch, req.Root, dir, req.Limits, 0); err != nil {
		return nil, err
	}
	return fetched, nil
}

// helmListsDependencies reports whether the chart in dir lists dependencies
// (Chart.yaml, or requirements.yaml for apiVersion v1 charts). Unreadable
// files count as listing some: loading the chart reports them.
func helmListsDependencies(dir string, maxBytes int64) bool {
	for _, name := range []string{"Chart.yaml", "requirements.yaml"} {
		data, err := helmReadFile(filepath.Join(dir, name), maxBytes)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		var deps struct {
			Dependencies []any `json:"dependencies"`
		}
		if err != nil || yaml.Unmarshal(data, &deps) != nil || len(deps.Dependencies) > 0 {
			return true
		}
	}
	return false
}

func helmFirst(vs ...string) string {
	for _, v := range vs {
		if v != "" {
			return v
		}
	}
	return ""
}

// helmChartRelative drops the chart name that Helm puts in front of template
// and CRD names ("mychart/templates/x.yaml" is "templates/x.yaml").
func helmChartRelative(name string) string {
	if _, rest, ok := strings.Cut(name, "/"); ok {
		return rest
	}
	return name
}

// helmCapabilities describes the target cluster: the source's own settings
// win over the cluster's, as in Argo CD.
func helmCapabilities(req Request, opts v1alpha1.ApplicationSourceHelm) (*common.Capabilities, error) {
	caps := common.DefaultCapabilities.Copy()
	if kv := helmFirst(opts.KubeVersion, req.KubeVersion); kv != "" {
		v, err := common.ParseKubeVersion(kv)
		if err != nil {
			return nil, fmt.Errorf("kubeVersion %q: %w", kv, err)
		}
		caps.KubeVersion = *v
	}
	apis := opts.APIVersions
	if len(apis) == 0 {
		apis = req.APIVersions
	}
	caps.APIVersions = append(caps.APIVersions, apis...)
	return caps, nil
}

// helmValues merges the user values like helm does with -f, --set,
// --set-string and --set-file, in that order of precedence (lowest first).
func helmValues(req Request, opts v1alpha1.ApplicationSourceHelm, relDir string, lim Limits) (map[string]any, error) {
	vals := map[string]any{}
	for _, vf := range opts.ValueFiles {
		data, err := helmValueFile(req, relDir, vf, lim)
		if errors.Is(err, os.ErrNotExist) && opts.IgnoreMissingValueFiles {
			continue
		}
		if err != nil {
			return nil, err
		}
		m, err := chartloader.LoadValues(bytes.NewReader(data))
		if err != nil {
			return nil, fmt.Errorf("value file %q: %w", vf, err)
		}
		vals = chartloader.MergeMaps(vals, m)
	}

	// valuesObject replaces values rather than merging with it, as in Argo CD.
	inline, what := []byte(opts.Values), "values"
	if opts.ValuesObject != nil && len(bytes.TrimSpace(opts.ValuesObject.Raw)) > 0 {
		inline, what = opts.ValuesObject.Raw, "valuesObject"
	}
	if len(bytes.TrimSpace(inline)) > 0 {
		m, err := chartloader.LoadValues(bytes.NewReader(inline))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", what, err)
		}
		vals = chartloader.MergeMaps(vals, m)
	}

	for _, forced := range []bool{false, true} {
		for _, p := range opts.Parameters {
			if p.ForceString != forced {
				continue
			}
			set := p.Name + "=" + helmEscapeSetValue(p.Value)
			parse := strvals.ParseInto
			if forced {
				parse = strvals.ParseIntoString
			}
			if err := parse(set, vals); err != nil {
				return nil, fmt.Errorf("parameter %q: %w", p.Name, err)
			}
		}
	}

	for _, fp := range opts.FileParameters {
		p, err := SecureJoin(req.Root, path.Join(relDir, filepath.ToSlash(fp.Path)))
		if err != nil {
			return nil, fmt.Errorf("file parameter %q: %w", fp.Name, err)
		}
		data, err := helmReadFile(p, lim.MaxFileBytes)
		if err != nil {
			return nil, fmt.Errorf("file parameter %q: %w", fp.Name, helmPathError(err))
		}
		// The path is read here; strvals only places the content.
		reader := func([]rune) (any, error) { return string(data), nil }
		if err := strvals.ParseIntoFile(fp.Name+"=-", vals, reader); err != nil {
			return nil, fmt.Errorf("file parameter %q: %w", fp.Name, err)
		}
	}
	return vals, nil
}

// helmEscapeSetValue escapes the commas of a parameter value, which --set
// would take for separators, unless the value is a {a,b} list, as Argo CD
// does.
func helmEscapeSetValue(v string) string {
	if strings.HasPrefix(v, "{") && strings.HasSuffix(v, "}") {
		return v
	}
	var b strings.Builder
	escaped := false
	for _, r := range v {
		if r == ',' && !escaped {
			b.WriteRune('\\')
		}
		escaped = r == '\\' && !escaped
		b.WriteRune(r)
	}
	return b.String()
}

// helmValueFile reads value file vf: a URL's content fetched by the caller
// (RemoteValueFiles), else the file helmValueFilePath finds. A missing
// file's error is os.ErrNotExist.
func helmValueFile(req Request, relDir, vf string, lim Limits) ([]byte, error) {
	if IsValueFileURL(vf) {
		data, ok := req.RemoteValueFiles[vf]
		if !ok {
			return nil, fmt.Errorf("value file %q: %w (not fetched before the render)", redactUserInfo(vf), os.ErrNotExist)
		}
		return data, nil
	}
	p, err := helmValueFilePath(req, relDir, vf)
	if err != nil {
		return nil, err
	}
	data, err := helmReadFile(p, lim.MaxFileBytes)
	if err != nil {
		return nil, fmt.Errorf("value file %q: %w", vf, helmPathError(err))
	}
	return data, nil
}

// IsValueFileURL reports whether a Helm value file is given by URL, to be
// fetched rather than read from a checkout.
func IsValueFileURL(vf string) bool {
	return strings.Contains(vf, "://")
}

// redactUserInfo is raw without the credentials of its user info, for
// messages.
func redactUserInfo(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.User == nil {
		return raw
	}
	u.User = nil
	return u.String()
}

// helmValueFilePath resolves a value file: "$ref/path" in the checkout of the
// source named ref, else relative to the chart directory; either way it may
// not leave its root.
func helmValueFilePath(req Request, relDir, vf string) (string, error) {
	if ref, rest, ok := strings.Cut(vf, "/"); ok && strings.HasPrefix(ref, "$") {
		root, found := req.RefRoots[ref[1:]]
		if !found || root == "" {
			return "", fmt.Errorf("value file %q: no source has ref %q", vf, ref[1:])
		}
		p, err := SecureJoin(root, rest)
		if err != nil {
			return "", fmt.Errorf("value file %q: %w", vf, err)
		}
		return p, nil
	}
	if filepath.IsAbs(vf) || path.IsAbs(filepath.ToSlash(vf)) {
		return "", fmt.Errorf("value file %q: absolute paths are not allowed", vf)
	}
	p, err := SecureJoin(req.Root, path.Join(relDir, filepath.ToSlash(vf)))
	if err != nil {
		return "", fmt.Errorf("value file %q: %w", vf, err)
	}
	return p, nil
}

func helmWithin(root, p string) bool {
	rel, err := filepath.Rel(root, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

// helmPathError keeps the cause of a file error and drops the absolute
// path, which says where the server keeps checkouts.
func helmPathError(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return fmt.Errorf("%s: %w", pe.Op, pe.Err)
	}
	return err
}

// helmReadFile reads a regular file of at most max bytes.
func helmReadFile(p string, max int64) ([]byte, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, errors.New("not a regular file")
	}
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > max {
		return nil, fmt.Errorf("file is larger than %d bytes", max)
	}
	return data, nil
}

// helmLoadChart loads the chart in dir, reading only files that resolve
// inside root, then supplies the dependencies missing from charts/.
func helmLoadChart(ctx context.Context, fetch DependencyFetcher, root, dir string, lim Limits, depth int) (*chart.Chart, error) {
	files, err := helmChartFiles(ctx, root, dir, lim)
	if err != nil {
		return nil, err
	}
	chrt, err := chartloader.LoadFiles(files)
	if err != nil {
		return nil, fmt.Errorf("load chart: %w", err)
	}
	if err := helmAddMissingDependencies(ctx, fetch, root, dir, chrt, lim, depth); err != nil {
		return nil, err
	}
	return chrt, nil
}

// helmChartFiles reads the chart directory like Helm's directory loader
// (honouring .helmignore), except that symlinks must resolve inside root and
// the limits bound the files read.
func helmChartFiles(ctx context.Context, root, dir string, lim Limits) ([]*archive.BufferedFile, error) {
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		return nil, fmt.Errorf("resolve root: %w", helmPathError(err))
	}
	realDir, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return nil, fmt.Errorf("chart directory: %w", helmPathError(err))
	}
	if !helmWithin(realRoot, realDir) {
		return nil, errors.New("chart directory is outside the source root")
	}
	rules := ignore.Empty()
	if data, err := helmReadFile(filepath.Join(realDir, ignore.HelmIgnore), lim.MaxFileBytes); err == nil {
		if rules, err = ignore.Parse(bytes.NewReader(data)); err != nil {
			return nil, fmt.Errorf("%s: %w", ignore.HelmIgnore, err)
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("%s: %w", ignore.HelmIgnore, helmPathError(err))
	}
	rules.AddDefaults()

	var files []*archive.BufferedFile
	var total int64
	visited := map[string]bool{}
	var walk func(real, name string) error
	walk = func(real, name string) error {
		if visited[real] {
			return fmt.Errorf("%s: directory symlink cycle", name)
		}
		visited[real] = true
		entries, err := os.ReadDir(real)
		if err != nil {
			return fmt.Errorf("%s: %w", helmFirst(name, "."), helmPathError(err))
		}
		for _, e := range entries {
			if err := ctx.Err(); err != nil {
				return err
			}
			n := path.Join(name, e.Name())
			p := filepath.Join(real, e.Name())
			if e.Type()&os.ModeSymlink != 0 {
				if p, err = filepath.EvalSymlinks(p); err != nil {
					return fmt.Errorf("%s: %w", n, helmPathError(err))
				}
				if !helmWithin(realRoot, p) {
					return fmt.Errorf("%s: symlink leaves the source root", n)
				}
			}
			fi, err := os.Stat(p)
			if err != nil {
				return fmt.Errorf("%s: %w", n, helmPathError(err))
			}
			if rules.Ignore(n, fi) {
				continue
			}
			if fi.IsDir() {
				if err := walk(p, n); err != nil {
					return err
				}
				continue
			}
			if !fi.Mode().IsRegular() {
				return fmt.Errorf("%s: not a regular file", n)
			}
			if len(files) >= lim.MaxFiles {
				return fmt.Errorf("chart has more than %d files", lim.MaxFiles)
			}
			data, err := helmReadFile(p, lim.MaxFileBytes)
			if err != nil {
				return fmt.Errorf("%s: %w", n, helmPathError(err))
			}
			if total += int64(len(data)); total > archive.MaxDecompressedChartSize {
				return fmt.Errorf("chart is larger than %d bytes", archive.MaxDecompressedChartSize)
			}
			data = bytes.TrimPrefix(data, []byte("\xEF\xBB\xBF"))
			files = append(files, &archive.BufferedFile{Name: n, ModTime: fi.ModTime(), Data: data})
		}
		return nil
	}
	if err := walk(realDir, ""); err != nil {
		return nil, err
	}
	return files, nil
}

// helmAddMissingDependencies loads the dependencies that Chart.yaml lists
// but charts/ lacks, as `helm dependency build` would fetch them: file://
// charts from inside root, others from their HTTP repository.
func helmAddMissingDependencies(ctx context.Context, fetch DependencyFetcher, root, dir string, chrt *chart.Chart, lim Limits, depth int) error {
	present := map[string]bool{}
	for _, d := range chrt.Dependencies() {
		present[d.Name()] = true
	}
	locked := map[string]string{}
	if chrt.Lock != nil {
		for _, d := range chrt.Lock.Dependencies {
			locked[d.Name+"\x00"+d.Repository] = d.Version
		}
	}
	for _, d := range chrt.Metadata.Dependencies {
		if d == nil || present[d.Name] {
			continue
		}
		if depth >= helmMaxDependencyDepth {
			return fmt.Errorf("dependency %s: dependencies nest deeper than %d", d.Name, helmMaxDependencyDepth)
		}
		var sub *chart.Chart
		var err error
		repo := strings.TrimSpace(d.Repository)
		switch {
		case strings.HasPrefix(repo, "file://"):
			sub, err = helmLoadFileDependency(ctx, fetch, root, dir, strings.TrimPrefix(repo, "file://"), lim, depth)
		case strings.HasPrefix(repo, "http://"), strings.HasPrefix(repo, "https://"):
			version := d.Version
			if v, ok := locked[d.Name+"\x00"+d.Repository]; ok && v != "" {
				version = v
			}
			var subDir string
			subDir, err = fetch(ctx, repo, d.Name, version)
			if err == nil {
				sub, err = helmLoadChart(ctx, fetch, subDir, subDir, lim, depth+1)
			}
		case repo == "":
			err = errors.New("not in charts/ and no repository to fetch it from")
		default:
			err = fmt.Errorf("not in charts/ and repository %q is neither file:// nor an http(s) Helm repository; vendor it in charts/", repo)
		}
		if err != nil {
			return fmt.Errorf("dependency %s: %w", d.Name, err)
		}
		if sub.Name() != d.Name {
			return fmt.Errorf("dependency %s: the chart found is named %s", d.Name, sub.Name())
		}
		chrt.AddDependency(sub)
		present[d.Name] = true
	}
	return nil
}

func helmLoadFileDependency(ctx context.Context, fetch DependencyFetcher, root, dir, rel string, lim Limits, depth int) (*chart.Chart, error) {
	relDir, err := filepath.Rel(root, dir)
	if err != nil {
		return nil, err
	}
	p, err := SecureJoin(root, path.Join(filepath.ToSlash(relDir), rel))
	if err != nil {
		return nil, err
	}
	return helmLoadChart(ctx, fetch, root, p, lim, depth+1)
}

// helmDecode splits a rendered template into objects, skipping empty
// documents.
func helmDecode(content string) ([]*unstructured.Unstructured, error) {
	r := utilyaml.NewYAMLReader(bufio.NewReader(strings.NewReader(content)))
	var objs []*unstructured.Unstructured
	for i := 1; ; i++ {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return objs, nil
		}
		if err != nil {
			return nil, err
		}
		js, err := yaml.YAMLToJSON(doc)
		if err != nil {
			return nil, fmt.Errorf("document %d: %w", i, err)
		}
		js = bytes.TrimSpace(js)
		if len(js) == 0 || bytes.Equal(js, []byte("null")) {
			continue
		}
		if js[0] != '{' {
			return nil, fmt.Errorf("document %d is not an object", i)
		}
		var m map[string]any
		if err := utiljson.Unmarshal(js, &m); err != nil {
			return nil, fmt.Errorf("document %d: %w", i, err)
		}
		o := &unstructured.Unstructured{Object: m}
		if o.GetAPIVersion() == "" || o.GetKind() == "" {
			return nil, fmt.Errorf("document %d has no apiVersion or kind", i)
		}
		objs = append(objs, o)
	}
}
