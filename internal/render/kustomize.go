// Deprecated kustomization fields (bases, commonLabels, patchesStrategicMerge...)
// are used on purpose: kustomize still loads them and its edit commands write them.
//
//lint:file-ignore SA1019 see above

package render

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path"
	"slices"
	"strconv"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"

	"github.com/skiffcd/skiff/api/v1alpha1"
)

// renderKustomize builds the kustomization in dir with krusty. krusty
// takes no context, so the build runs in a worker (kustomizeBuild), killed
// if ctx ends first; the caller decodes its YAML. Every manifest's File is
// the application's kustomization file.
func renderKustomize(ctx context.Context, req Request, t tree, dir string) ([]Manifest, error) {
	outs, err := isolate(ctx, req, job{Kind: KindKustomize, Request: req, Dir: dir, MaxOutputBytes: req.Limits.MaxOutputBytes})
	if err != nil {
		return nil, fmt.Errorf("%s: kustomize build: %w", t.rel(dir), err)
	}
	var out []Manifest
	for _, o := range outs {
		objs, err := decodeYAML(o.Name, o.Text)
		if err != nil {
			return nil, err
		}
		for _, obj := range objs {
			out = append(out, Manifest{Object: obj, File: o.Name})
		}
	}
	return out, nil
}

// kustomizeBuild is the worker's side of renderKustomize.
//
// Kustomize reads from an in-memory copy of the repository, so it cannot
// read outside the root whatever its load restrictor allows, and Argo CD's
// overrides are applied by editing the copy of the application's
// kustomization file, as Argo CD's `kustomize edit` calls do. Remote
// resources are refused before the build: there is no network access.
func kustomizeBuild(ctx context.Context, j job) ([]jobOutput, error) {
	req := j.Request
	req.Limits = effectiveLimits(req.Limits)
	t, err := newTree(req.Root)
	if err != nil {
		return nil, err
	}
	fSys := filesys.MakeFsInMemory()
	if err := copyTree(ctx, req.Limits, t, req.ImmutableRoot, fSys); err != nil {
		return nil, err
	}
	memDir := path.Join("/", t.rel(j.Dir))
	kfile := findKustomization(fSys, memDir)
	if kfile == "" {
		return nil, fmt.Errorf("no kustomization file (%s)", strings.Join(kustomizationNames, ", "))
	}
	name := strings.TrimPrefix(kfile, "/")
	if o := req.Source.Kustomize; o != nil {
		if err := applyOverrides(fSys, kfile, o, req); err != nil {
			return nil, fmt.Errorf("%s: kustomize overrides: %w", name, err)
		}
	}
	if err := refuseRemote(fSys, memDir, map[string]bool{}); err != nil {
		return nil, err
	}
	resMap, err := krusty.MakeKustomizer(req.Kustomize.krustyOptions()).Run(fSys, memDir)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	y, err := resMap.AsYaml()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return []jobOutput{{Name: name, Text: y}}, nil
}

// copyTree copies the repository (but .git) into fSys, rooted at "/". The
// copy counts against MaxFiles and MaxFileBytes per file, and its total size
// is bounded by MaxOutputBytes so a huge repository cannot exhaust memory.
//
// Reading the files is most of a Kustomize render's cost (a whole
// repository for one kustomization, which may reach anywhere in it), so
// the files of an immutable root are kept for the next job: the apps of
// one commit, compared together, read it once per worker.
func copyTree(ctx context.Context, lim Limits, t tree, immutable bool, fSys filesys.FileSystem) error {
	files, ok := lastTree.get(t.root, lim, immutable)
	if !ok {
		var err error
		if files, err = readTree(ctx, lim, t); err != nil {
			return err
		}
		lastTree.put(t.root, lim, immutable, files)
	}
	for _, f := range files {
		if err := fSys.WriteFile(f.path, f.data); err != nil {
			return err
		}
	}
	return nil
}

// treeFile is a file of a repository, by its path from "/".
type treeFile struct {
	path string
	data []byte
}

func readTree(ctx context.Context, lim Limits, t tree) ([]treeFile, error) {
	var files []treeFile
	var total int64
	skipGit := func(name string) bool { return name == ".git" }
	err := t.walk(ctx, t.root, true, skipGit, func(p string, info fs.FileInfo) error {
		if len(files) >= lim.MaxFiles {
			return fmt.Errorf("repository has more than %d files for kustomize to read", lim.MaxFiles)
		}
		if info.Size() > lim.MaxFileBytes {
			return fmt.Errorf("%s: file is larger than the limit of %d bytes", t.rel(p), lim.MaxFileBytes)
		}
		data, err := t.readFile(p, lim.MaxFileBytes)
		if err != nil {
			return err
		}
		if total += int64(len(data)); total > lim.MaxOutputBytes {
			return fmt.Errorf("repository is larger than the limit of %d bytes for kustomize to read", lim.MaxOutputBytes)
		}
		files = append(files, treeFile{path: path.Join("/", t.rel(p)), data: data})
		return nil
	})
	return files, err
}

// maxKeptTreeBytes bounds the tree a worker keeps between jobs; a larger
// one is read again for each render.
const maxKeptTreeBytes = 32 << 20

// lastTree is the last immutable tree read, with the limits it was read
// under (a tree read under larger limits may not serve smaller ones).
var lastTree keptTree

type keptTree struct {
	mu    sync.Mutex
	root  string
	lim   Limits
	files []treeFile
}

func (k *keptTree) get(root string, lim Limits, immutable bool) ([]treeFile, bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if !immutable || k.root != root || k.lim != lim {
		return nil, false
	}
	return k.files, true
}

func (k *keptTree) put(root string, lim Limits, immutable bool, files []treeFile) {
	var size int64
	for _, f := range files {
		size += int64(len(f.data))
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if !immutable || size > maxKeptTreeBytes {
		return
	}
	k.root, k.lim, k.files = root, lim, files
}

// findKustomization returns the kustomization file in dir, or "".
func findKustomization(fSys filesys.FileSystem, dir string) string {
	for _, n := range kustomizationNames {
		p := path.Join(dir, n)
		if fSys.Exists(p) && !fSys.IsDir(p) {
			return p
		}
	}
	return ""
}

// refuseRemote walks the kustomizations reachable from dir and refuses any
// reference to a remote base or file, which kustomize would fetch with git
// or HTTP.
func refuseRemote(fSys filesys.FileSystem, dir string, seen map[string]bool) error {
	if seen[dir] {
		return nil
	}
	seen[dir] = true
	kfile := findKustomization(fSys, dir)
	if kfile == "" {
		return nil
	}
	data, err := fSys.ReadFile(kfile)
	if err != nil {
		return err
	}
	var k types.Kustomization
	if err := k.Unmarshal(data); err != nil {
		return nil // kustomize reports it, with its own words
	}
	for _, ref := range kustomizationRefs(&k) {
		if isRemote(ref) {
			return fmt.Errorf("%s: remote reference %q is not supported: renders have no network access", strings.TrimPrefix(kfile, "/"), ref)
		}
		if p := path.Join(dir, ref); !strings.Contains(ref, "\n") && fSys.IsDir(p) {
			if err := refuseRemote(fSys, p, seen); err != nil {
				return err
			}
		}
	}
	return nil
}

// kustomizationRefs lists the fields of k that name files, directories or
// URLs to load. Deprecated fields are read on purpose: kustomize still loads them.
func kustomizationRefs(k *types.Kustomization) []string {
	var refs []string
	refs = append(refs, k.Resources...)
	refs = append(refs, k.Bases...)
	refs = append(refs, k.Components...)
	refs = append(refs, k.Crds...)
	refs = append(refs, k.Configurations...)
	refs = append(refs, k.Generators...)
	refs = append(refs, k.Transformers...)
	refs = append(refs, k.Validators...)
	for _, p := range k.PatchesStrategicMerge {
		refs = append(refs, string(p))
	}
	for _, p := range slices.Concat(k.Patches, k.PatchesJson6902) {
		refs = append(refs, p.Path)
	}
	for _, r := range k.Replacements {
		refs = append(refs, r.Path)
	}
	refs = append(refs, k.OpenAPI["path"])
	sources := func(kv types.KvPairSources) {
		for _, f := range kv.FileSources {
			_, p, found := strings.Cut(f, "=")
			if !found {
				p = f
			}
			refs = append(refs, p)
		}
		refs = append(refs, kv.EnvSources...)
		refs = append(refs, kv.EnvSource)
	}
	for _, g := range k.ConfigMapGenerator {
		sources(g.KvPairSources)
	}
	for _, g := range k.SecretGenerator {
		sources(g.KvPairSources)
	}
	return refs
}

// isRemote reports whether kustomize would treat ref as a URL or git
// repository: any scheme, go-getter's "git::", "gh:", github.com shorthand
// and scp-like user@host:path.
func isRemote(ref string) bool {
	if ref == "" || strings.Contains(ref, "\n") {
		return false // inline content, not a reference
	}
	l := strings.ToLower(strings.TrimSpace(ref))
	if strings.Contains(l, "://") || strings.HasPrefix(l, "git::") || strings.HasPrefix(l, "gh:") ||
		strings.HasPrefix(l, "github.com/") || strings.HasPrefix(l, "github.com:") {
		return true
	}
	at := strings.Index(l, "@")
	return at > 0 && !strings.Contains(l[:at], "/") && strings.Contains(l[at:], ":")
}

// applyOverrides edits the kustomization file kfile as Argo CD's
// `kustomize edit` calls would.
func applyOverrides(fSys filesys.FileSystem, kfile string, o *v1alpha1.ApplicationSourceKustomize, req Request) error {
	data, err := fSys.ReadFile(kfile)
	if err != nil {
		return err
	}
	var k types.Kustomization
	if err := k.Unmarshal(data); err != nil {
		return err
	}
	k.FixKustomization()

	if o.NamePrefix != "" {
		k.NamePrefix = o.NamePrefix
	}
	if o.NameSuffix != "" {
		k.NameSuffix = o.NameSuffix
	}
	for _, img := range o.Images {
		if err := setImage(&k, img); err != nil {
			return err
		}
	}
	for _, r := range o.Replicas {
		if err := setReplicas(&k, r.Name, r.Count); err != nil {
			return err
		}
	}
	if len(o.CommonLabels) > 0 {
		if err := addLabels(&k, o); err != nil {
			return err
		}
	}
	if len(o.CommonAnnotations) > 0 {
		if k.CommonAnnotations == nil {
			k.CommonAnnotations = map[string]string{}
		}
		env := argoEnv(req)
		for _, key := range sortedKeys(o.CommonAnnotations) {
			v := o.CommonAnnotations[key]
			if o.CommonAnnotationsEnvsubst {
				v = os.Expand(v, func(name string) string {
					if name == "$" {
						return "$" // "$$" escapes a dollar
					}
					return env[name]
				})
			}
			if _, exists := k.CommonAnnotations[key]; exists && !o.ForceCommonAnnotations {
				return fmt.Errorf("annotation %q is already set in the kustomization (forceCommonAnnotations overrides it)", key)
			}
			k.CommonAnnotations[key] = v
		}
	}
	if o.Namespace != "" {
		k.Namespace = o.Namespace
	}
	if len(o.Patches) > 0 {
		// The API's patch has the same JSON shape as kustomize's.
		j, err := json.Marshal(o.Patches)
		if err != nil {
			return err
		}
		var patches []types.Patch
		if err := json.Unmarshal(j, &patches); err != nil {
			return fmt.Errorf("patches: %w", err)
		}
		k.Patches = append(k.Patches, patches...)
	}
	for _, c := range o.Components {
		if o.IgnoreMissingComponents && !isRemote(c) && !fSys.Exists(path.Join(path.Dir(kfile), c)) {
			continue
		}
		if !slices.Contains(k.Components, c) {
			k.Components = append(k.Components, c)
		}
	}

	out, err := yaml.Marshal(&k)
	if err != nil {
		return err
	}
	return fSys.WriteFile(kfile, out)
}

// setImage applies one `kustomize edit set image` argument: "name:tag",
// "name@digest", "name=newName", "name=newName:tag" or "name=newName@digest".
func setImage(k *types.Kustomization, arg string) error {
	old, repl, renamed := strings.Cut(arg, "=")
	if !renamed {
		repl = arg
	}
	newName, tag, digest := parseImage(repl)
	img := types.Image{Name: newName, NewTag: tag, Digest: digest}
	if renamed {
		img = types.Image{Name: old, NewName: newName, NewTag: tag, Digest: digest}
	}
	if img.Name == "" {
		return fmt.Errorf("image %q: no image name", arg)
	}
	for i := range k.Images {
		e := &k.Images[i]
		if e.Name != img.Name {
			continue
		}
		if img.NewName != "" {
			e.NewName = img.NewName
		}
		if img.NewTag != "" {
			e.NewTag, e.Digest = img.NewTag, ""
		}
		if img.Digest != "" {
			e.Digest, e.NewTag = img.Digest, ""
		}
		return nil
	}
	k.Images = append(k.Images, img)
	return nil
}

// parseImage splits "registry:port/name:tag@digest" into name, tag and
// digest; a colon before the last slash belongs to the registry.
func parseImage(s string) (name, tag, digest string) {
	name, digest, _ = strings.Cut(s, "@")
	if i := strings.LastIndex(name, ":"); i > strings.LastIndex(name, "/") {
		name, tag = name[:i], name[i+1:]
	}
	return name, tag, digest
}

func setReplicas(k *types.Kustomization, name string, count intstr.IntOrString) error {
	n := int64(count.IntVal)
	if count.Type == intstr.String {
		var err error
		if n, err = strconv.ParseInt(count.StrVal, 10, 64); err != nil {
			return fmt.Errorf("replicas of %q: count %q is not an integer", name, count.StrVal)
		}
	}
	for i := range k.Replicas {
		if k.Replicas[i].Name == name {
			k.Replicas[i].Count = n
			return nil
		}
	}
	k.Replicas = append(k.Replicas, types.Replica{Name: name, Count: n})
	return nil
}

// addLabels adds commonLabels as `kustomize edit add label` does: to
// commonLabels (selectors included), or with labelWithoutSelector to a labels
// entry that leaves selectors alone.
func addLabels(k *types.Kustomization, o *v1alpha1.ApplicationSourceKustomize) error {
	var pairs map[string]string
	if o.LabelWithoutSelector {
		idx := slices.IndexFunc(k.Labels, func(l types.Label) bool {
			return !l.IncludeSelectors && l.IncludeTemplates == o.LabelIncludeTemplates && len(l.FieldSpecs) == 0
		})
		if idx < 0 {
			k.Labels = append(k.Labels, types.Label{IncludeTemplates: o.LabelIncludeTemplates})
			idx = len(k.Labels) - 1
		}
		if k.Labels[idx].Pairs == nil {
			k.Labels[idx].Pairs = map[string]string{}
		}
		pairs = k.Labels[idx].Pairs
	} else {
		// `kustomize edit add label` writes commonLabels.
		if k.CommonLabels == nil {
			k.CommonLabels = map[string]string{}
		}
		pairs = k.CommonLabels
	}
	for _, key := range sortedKeys(o.CommonLabels) {
		if _, exists := pairs[key]; exists && !o.ForceCommonLabels {
			return fmt.Errorf("label %q is already set in the kustomization (forceCommonLabels overrides it)", key)
		}
		pairs[key] = o.CommonLabels[key]
	}
	return nil
}

// argoEnv is the build environment Argo CD gives tools, for
// commonAnnotationsEnvsubst.
func argoEnv(req Request) map[string]string {
	return map[string]string{
		"ARGOCD_APP_NAME":                   req.AppName,
		"ARGOCD_APP_NAMESPACE":              req.Namespace,
		"ARGOCD_APP_SOURCE_REPO_URL":        req.Source.RepoURL,
		"ARGOCD_APP_SOURCE_PATH":            req.Source.Path,
		"ARGOCD_APP_SOURCE_TARGET_REVISION": req.Source.TargetRevision,
		"KUBE_VERSION":                      strings.TrimPrefix(req.KubeVersion, "v"),
		"KUBE_API_VERSIONS":                 strings.Join(req.APIVersions, ","),
	}
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
