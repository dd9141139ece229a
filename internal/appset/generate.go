package appset

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"slices"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/skiffcd/skiff/api/v1alpha1"
	"github.com/skiffcd/skiff/internal/clusters"
)

// ErrUnsupported marks a generator Skiff does not run (yet): the
// controller reports it in a condition.
var ErrUnsupported = errors.New("generator not supported")

// GitTrees gives the files of a repository at a revision (a branch, tag,
// commit or HEAD; "" is HEAD) and the commit SHA it resolved to, as
// reposerver's Tree does. It is asked once per repository and revision
// in a Generate or Applications call, so the caller can release the
// checkouts after it. DirTree serves a directory.
type GitTrees func(repoURL, revision string) (tree fs.FS, sha string, err error)

// Inputs are the data the generators read.
type Inputs struct {
	// Clusters are the clusters Skiff knows (clusters.Snapshot's), the
	// in-cluster one included when enabled.
	Clusters []clusters.Cluster
	// Git serves the git generators; nil when none is used.
	Git GitTrees
	// ClusterDecisions serves the clusterDecisionResource generators; nil
	// when none is used.
	ClusterDecisions ClusterDecisions
	// SCM serves the scmProvider generators; nil when none is used.
	SCM SCMProviders
	// PullRequests serves the pullRequest generators; nil when none is
	// used.
	PullRequests PullRequests
}

// Set is what one top-level generator produced: its parameter sets and
// the template they render into (the spec's, with the generator's
// override merged in).
type Set struct {
	Template v1alpha1.ApplicationSetTemplate
	Params   []Params
}

// Result is the generators' output.
type Result struct {
	Sets []Set
	// RequeueAfter is the spec's RequeueAfter.
	RequeueAfter time.Duration
}

// Default requeue intervals, as Argo CD's.
const (
	defaultGitRequeue = 3 * time.Minute
	defaultAPIRequeue = 30 * time.Minute
)

// Generate runs every generator of spec.
func Generate(spec *v1alpha1.ApplicationSetSpec, in Inputs) (Result, error) {
	return generate(spec, in, OptionsOf(spec).withCache())
}

func generate(spec *v1alpha1.ApplicationSetSpec, in Inputs, opts Options) (Result, error) {
	g := &generator{opts: opts, in: in}
	var res Result
	for i, gen := range spec.Generators {
		params, err := g.run(gen, 0, nil)
		if err != nil {
			return Result{}, fmt.Errorf("generator %d (%s): %w", i+1, kindOf(gen), err)
		}
		tmpl, err := MergeTemplate(spec.Template, overrideOf(gen))
		if err != nil {
			return Result{}, fmt.Errorf("generator %d (%s): %w", i+1, kindOf(gen), err)
		}
		res.Sets = append(res.Sets, Set{Template: tmpl, Params: params})
	}
	res.RequeueAfter = RequeueAfter(spec)
	return res, nil
}

type generator struct {
	opts Options
	in   Inputs
	// trees holds what in.Git gave, by repository and revision: a matrix
	// runs its second generator once per set of the first.
	trees map[[2]string]checkout
}

// checkout is one answer of Inputs.Git.
type checkout struct {
	fs  fs.FS
	sha string
	err error
}

// tree reads a repository at a revision once per generate call.
func (g *generator) tree(repoURL, revision string) (fs.FS, string, error) {
	key := [2]string{repoURL, revision}
	if t, ok := g.trees[key]; ok {
		return t.fs, t.sha, t.err
	}
	var t checkout
	t.fs, t.sha, t.err = g.in.Git(repoURL, revision)
	if g.trees == nil {
		g.trees = map[[2]string]checkout{}
	}
	g.trees[key] = t
	return t.fs, t.sha, t.err
}

// kindsOf names the kinds gen sets; one is expected.
func kindsOf(gen v1alpha1.ApplicationSetGenerator) []string {
	var kinds []string
	for _, k := range []struct {
		name string
		set  bool
	}{
		{"list", gen.List != nil},
		{"clusters", gen.Clusters != nil},
		{"git", gen.Git != nil},
		{"matrix", gen.Matrix != nil},
		{"merge", gen.Merge != nil},
		{"scmProvider", gen.SCMProvider != nil},
		{"pullRequest", gen.PullRequest != nil},
		{"clusterDecisionResource", gen.ClusterDecisionResource != nil},
		{"plugin", gen.Plugin != nil},
	} {
		if k.set {
			kinds = append(kinds, k.name)
		}
	}
	return kinds
}

// kindOf names the kind gen sets: "none", or several joined by "+".
func kindOf(gen v1alpha1.ApplicationSetGenerator) string {
	kinds := kindsOf(gen)
	if len(kinds) == 0 {
		return "none"
	}
	return strings.Join(kinds, "+")
}

// overrideOf is the generator's own template, if any.
func overrideOf(gen v1alpha1.ApplicationSetGenerator) *v1alpha1.ApplicationSetTemplate {
	switch {
	case gen.List != nil:
		return gen.List.Template
	case gen.Clusters != nil:
		return gen.Clusters.Template
	case gen.Git != nil:
		return gen.Git.Template
	case gen.Matrix != nil:
		return gen.Matrix.Template
	case gen.Merge != nil:
		return gen.Merge.Template
	case gen.SCMProvider != nil:
		return gen.SCMProvider.Template
	case gen.PullRequest != nil:
		return gen.PullRequest.Template
	case gen.ClusterDecisionResource != nil:
		return gen.ClusterDecisionResource.Template
	case gen.Plugin != nil:
		return gen.Plugin.Template
	}
	return nil
}

// run gives the parameter sets of gen at a nesting depth (0: top level),
// filtered by its selector. outer, when not nil, are the parameters of a
// matrix's first generator, which gen's fields may use.
func (g *generator) run(gen v1alpha1.ApplicationSetGenerator, depth int, outer Params) ([]Params, error) {
	if outer != nil {
		var err error
		if gen, err = g.interpolate(gen, outer); err != nil {
			return nil, fmt.Errorf("using the first generator's parameters: %w", err)
		}
	}
	var params []Params
	var err error
	switch kindOf(gen) {
	case "list":
		params, err = g.list(gen.List)
	case "clusters":
		params, err = g.clusters(gen.Clusters, outer)
	case "git":
		params, err = g.git(gen.Git, outer)
	case "matrix":
		params, err = g.matrix(gen.Matrix, depth)
	case "merge":
		params, err = g.merge(gen.Merge, depth)
	case "clusterDecisionResource":
		params, err = g.clusterDecisions(gen.ClusterDecisionResource, outer)
	case "scmProvider":
		params, err = g.scmProvider(gen.SCMProvider, outer)
	case "pullRequest":
		params, err = g.pullRequests(gen.PullRequest, outer)
	case "plugin":
		err = ErrUnsupported
	case "none":
		err = errors.New("no generator is set (list, clusters, git, matrix, merge, ...)")
	default:
		err = errors.New("one generator entry sets several kinds; give each its own entry")
	}
	if err != nil {
		return nil, err
	}
	return selectParams(params, gen.Selector)
}

// interpolate renders gen's fields with the parameters of a matrix's first
// generator, but not its values (rendered with each set's own parameters
// and these, see withValues) nor its template (unused when nested).
func (g *generator) interpolate(gen v1alpha1.ApplicationSetGenerator, outer Params) (v1alpha1.ApplicationSetGenerator, error) {
	tree, err := toMap(gen)
	if err != nil {
		return gen, err
	}
	kept := map[string]map[string]any{}
	for kind, v := range tree {
		spec, ok := v.(map[string]any)
		if !ok {
			continue
		}
		kept[kind] = map[string]any{}
		for _, f := range []string{"values", "template"} {
			if fv, ok := spec[f]; ok {
				kept[kind][f] = fv
				delete(spec, f)
			}
		}
	}
	rendered, err := renderValue(tree, outer, g.opts)
	if err != nil {
		return gen, err
	}
	out := rendered.(map[string]any)
	for kind, fields := range kept {
		if spec, ok := out[kind].(map[string]any); ok {
			maps.Copy(spec, fields)
		}
	}
	var interpolated v1alpha1.ApplicationSetGenerator
	js, err := json.Marshal(out)
	if err != nil {
		return gen, err
	}
	return interpolated, json.Unmarshal(js, &interpolated)
}

// selectParams keeps the sets whose flattened values match selector.
func selectParams(params []Params, selector *metav1.LabelSelector) ([]Params, error) {
	if selector == nil {
		return params, nil
	}
	var out []Params
	for _, p := range params {
		ok, err := matches(selector, flat(p))
		if err != nil {
			return nil, err
		}
		if ok {
			out = append(out, p)
		}
	}
	return out, nil
}

// matches says whether set satisfies selector (an empty one matches all).
// Unlike Kubernetes' label selectors, values are not checked to be label
// values, so that a selector can match a server URL, as in Argo CD.
func matches(selector *metav1.LabelSelector, set map[string]string) (bool, error) {
	for k, v := range selector.MatchLabels {
		if got, ok := set[k]; !ok || got != v {
			return false, nil
		}
	}
	for _, e := range selector.MatchExpressions {
		got, has := set[e.Key]
		var ok bool
		switch e.Operator {
		case metav1.LabelSelectorOpIn:
			ok = has && slices.Contains(e.Values, got)
		case metav1.LabelSelectorOpNotIn:
			ok = !has || !slices.Contains(e.Values, got)
		case metav1.LabelSelectorOpExists:
			ok = has
		case metav1.LabelSelectorOpDoesNotExist:
			ok = !has
		default:
			return false, fmt.Errorf("selector: unknown operator %q for key %q (In, NotIn, Exists, DoesNotExist)", e.Operator, e.Key)
		}
		if !ok {
			return false, nil
		}
	}
	return true, nil
}

// emptySelector says whether a selector has no requirement.
func emptySelector(s metav1.LabelSelector) bool {
	return len(s.MatchLabels) == 0 && len(s.MatchExpressions) == 0
}

// list gives the elements (then those of elementsYaml). Without
// goTemplate every value must be a string, and a "values" map becomes
// values.<key>.
func (g *generator) list(l *v1alpha1.ListGenerator) ([]Params, error) {
	var out []Params
	for i, raw := range l.Elements {
		var element map[string]any
		if err := json.Unmarshal(raw.Raw, &element); err != nil {
			return nil, fmt.Errorf("element %d is not an object: %w", i+1, err)
		}
		if g.opts.GoTemplate {
			out = append(out, element)
			continue
		}
		p, err := flatElement(element)
		if err != nil {
			return nil, fmt.Errorf("element %d: %w", i+1, err)
		}
		out = append(out, p)
	}
	if l.ElementsYaml != "" {
		var elements []map[string]any
		if err := yaml.Unmarshal([]byte(l.ElementsYaml), &elements); err != nil {
			return nil, fmt.Errorf("elementsYaml is not a list of objects: %w", err)
		}
		out = append(out, elements...)
	}
	return out, nil
}

// flatElement is a list element as `{{param}}` parameters.
func flatElement(element map[string]any) (Params, error) {
	p := Params{}
	for k, v := range element {
		if k == "values" {
			values, ok := v.(map[string]any)
			if !ok {
				return nil, errors.New("values is not a map")
			}
			for vk, vv := range values {
				s, ok := vv.(string)
				if !ok {
					return nil, fmt.Errorf("values.%s is %v, not a string (quote it, or use goTemplate)", vk, vv)
				}
				p["values."+vk] = s
			}
			continue
		}
		s, ok := v.(string)
		if !ok {
			return nil, fmt.Errorf("%s is %v, not a string (quote it, or use goTemplate)", k, v)
		}
		p[k] = s
	}
	return p, nil
}

// withValues adds a generator's values, each rendered with the set's
// parameters (and those of a matrix's first generator, outer):
// values.<key>, or .values.<key> with goTemplate.
func (g *generator) withValues(p Params, values map[string]string, outer Params) (Params, error) {
	if len(values) == 0 {
		return p, nil
	}
	scope := p
	if outer != nil {
		scope = maps.Clone(outer)
		maps.Copy(scope, p)
	}
	rendered := map[string]any{}
	for _, k := range slices.Sorted(maps.Keys(values)) {
		v, err := renderString(values[k], scope, g.opts)
		if err != nil {
			return nil, fmt.Errorf("values.%s: %w", k, err)
		}
		rendered[k] = v
	}
	if g.opts.GoTemplate {
		p["values"] = rendered
		return p, nil
	}
	for k, v := range rendered {
		p["values."+k] = v
	}
	return p, nil
}

// clusters gives one set per cluster whose labels match the selector; the
// implicit in-cluster cluster (no Secret) only when the selector is empty,
// as in Argo CD.
func (g *generator) clusters(c *v1alpha1.ClusterGenerator, outer Params) ([]Params, error) {
	var out []Params
	for _, cl := range g.in.Clusters {
		if cl.SecretName == "" && !emptySelector(c.Selector) {
			continue
		}
		ok, err := matches(&c.Selector, cl.Labels)
		if err != nil {
			return nil, err
		}
		if !ok {
			continue
		}
		p, err := g.withValues(g.clusterParams(cl), c.Values, outer)
		if err != nil {
			return nil, fmt.Errorf("cluster %s: %w", cl.Name, err)
		}
		out = append(out, p)
	}
	if c.FlatList {
		list := make([]any, len(out))
		for i, p := range out {
			list[i] = map[string]any(p)
		}
		return []Params{{"clusters": list}}, nil
	}
	return out, nil
}

// clusterParams are a cluster's parameters: name, nameNormalized, server,
// project, and the Secret's labels and annotations.
func (g *generator) clusterParams(c clusters.Cluster) Params {
	p := Params{"name": c.Name, "nameNormalized": sanitizeName(c.Name), "server": c.Server, "project": c.Project}
	if g.opts.GoTemplate {
		meta := map[string]any{}
		if len(c.Labels) > 0 {
			meta["labels"] = anyMap(c.Labels)
		}
		if len(c.Annotations) > 0 {
			meta["annotations"] = anyMap(c.Annotations)
		}
		p["metadata"] = meta
		return p
	}
	for k, v := range c.Labels {
		p["metadata.labels."+k] = v
	}
	for k, v := range c.Annotations {
		p["metadata.annotations."+k] = v
	}
	return p
}

func anyMap(m map[string]string) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// nestedToTop reads a generator of a matrix or merge; at depth 2 it may
// not combine others (Argo CD nests two levels).
func nestedToTop(n v1alpha1.ApplicationSetNestedGenerator, depth int) (v1alpha1.ApplicationSetGenerator, error) {
	gen := v1alpha1.ApplicationSetGenerator{
		List: n.List, Clusters: n.Clusters, Git: n.Git, SCMProvider: n.SCMProvider,
		ClusterDecisionResource: n.ClusterDecisionResource, PullRequest: n.PullRequest,
		Plugin: n.Plugin, Selector: n.Selector,
	}
	if n.Matrix == nil && n.Merge == nil {
		return gen, nil
	}
	if depth >= 2 {
		return gen, errors.New("a matrix or merge nests more than two levels deep")
	}
	if m, err := v1alpha1.ToNestedMatrixGenerator(n.Matrix); err != nil {
		return gen, err
	} else if m != nil {
		gen.Matrix = &v1alpha1.MatrixGenerator{Generators: toNested(m.Generators)}
	}
	if m, err := v1alpha1.ToNestedMergeGenerator(n.Merge); err != nil {
		return gen, err
	} else if m != nil {
		gen.Merge = &v1alpha1.MergeGenerator{Generators: toNested(m.Generators), MergeKeys: m.MergeKeys}
	}
	return gen, nil
}

func toNested(ts []v1alpha1.ApplicationSetTerminalGenerator) []v1alpha1.ApplicationSetNestedGenerator {
	out := make([]v1alpha1.ApplicationSetNestedGenerator, len(ts))
	for i, t := range ts {
		out[i] = t.ToNested()
	}
	return out
}

// matrix gives the product of two generators' sets; the second generator
// is run once per set of the first, with those parameters.
func (g *generator) matrix(m *v1alpha1.MatrixGenerator, depth int) ([]Params, error) {
	if len(m.Generators) != 2 {
		return nil, fmt.Errorf("a matrix takes exactly two generators, not %d", len(m.Generators))
	}
	first, err := nestedToTop(m.Generators[0], depth+1)
	if err != nil {
		return nil, err
	}
	second, err := nestedToTop(m.Generators[1], depth+1)
	if err != nil {
		return nil, err
	}
	as, err := g.run(first, depth+1, nil)
	if err != nil {
		return nil, fmt.Errorf("first generator (%s): %w", kindOf(first), err)
	}
	var out []Params
	for _, a := range as {
		bs, err := g.run(second, depth+1, a)
		if err != nil {
			return nil, fmt.Errorf("second generator (%s): %w", kindOf(second), err)
		}
		for _, b := range bs {
			if g.opts.GoTemplate {
				// The first generator's values win, deeply, as mergo gives them in Argo CD.
				out = append(out, mergeNested(mergeNested(Params{}, b, true), a, true))
				continue
			}
			p, err := combineFlat(a, b)
			if err != nil {
				return nil, err
			}
			out = append(out, p)
		}
	}
	return out, nil
}

// merge gives the first generator's sets, each merged with the sets of
// the later generators that have the same mergeKeys values (later ones
// win). Sets of later generators that match none are dropped.
func (g *generator) merge(m *v1alpha1.MergeGenerator, depth int) ([]Params, error) {
	if len(m.Generators) < 2 {
		return nil, fmt.Errorf("a merge takes at least two generators, not %d", len(m.Generators))
	}
	keys := slices.Compact(slices.Sorted(slices.Values(m.MergeKeys)))
	if len(keys) == 0 {
		return nil, errors.New("a merge needs mergeKeys")
	}
	var base []Params
	var baseKeys []string
	for i, n := range m.Generators {
		gen, err := nestedToTop(n, depth+1)
		if err != nil {
			return nil, err
		}
		params, err := g.run(gen, depth+1, nil)
		if err != nil {
			return nil, fmt.Errorf("generator %d (%s): %w", i+1, kindOf(gen), err)
		}
		byKey := map[string]Params{}
		var order []string
		for _, p := range params {
			k, err := mergeKey(p, keys)
			if err != nil {
				return nil, fmt.Errorf("generator %d (%s): %w", i+1, kindOf(gen), err)
			}
			if _, dup := byKey[k]; dup {
				return nil, fmt.Errorf("generator %d (%s) gives two sets with merge key %s", i+1, kindOf(gen), k)
			}
			byKey[k] = p
			order = append(order, k)
		}
		if i == 0 {
			for _, k := range order {
				base = append(base, byKey[k])
			}
			baseKeys = order
			continue
		}
		for j, k := range baseKeys {
			over, ok := byKey[k]
			if !ok {
				continue
			}
			if g.opts.GoTemplate {
				base[j] = mergeNested(mergeNested(Params{}, base[j], true), over, true)
				continue
			}
			merged := maps.Clone(base[j])
			maps.Copy(merged, over)
			base[j] = merged
		}
	}
	return base, nil
}

// mergeKey is the JSON of the set's values of keys (dotted names reach
// into nested sets).
func mergeKey(p Params, keys []string) (string, error) {
	values := map[string]any{}
	for _, k := range keys {
		v, _ := lookup(p, k)
		values[k] = v
	}
	js, err := json.Marshal(values)
	return string(js), err
}

// eachGenerator calls f with every generator of spec, those nested in a
// matrix or merge included (those nested too deep left out).
func eachGenerator(spec *v1alpha1.ApplicationSetSpec, f func(v1alpha1.ApplicationSetGenerator)) {
	var walk func(gen v1alpha1.ApplicationSetGenerator, depth int)
	walkNested := func(gens []v1alpha1.ApplicationSetNestedGenerator, depth int) {
		for _, n := range gens {
			if gen, err := nestedToTop(n, depth); err == nil {
				walk(gen, depth)
			}
		}
	}
	walk = func(gen v1alpha1.ApplicationSetGenerator, depth int) {
		f(gen)
		if gen.Matrix != nil {
			walkNested(gen.Matrix.Generators, depth+1)
		}
		if gen.Merge != nil {
			walkNested(gen.Merge.Generators, depth+1)
		}
	}
	for _, gen := range spec.Generators {
		walk(gen, 0)
	}
}

// GitRepos lists the repository URLs the git generators of spec read,
// nested ones included, as written (a URL templated from a matrix's first
// generator stays a template), sorted, without repeats. A git webhook for
// one of them is a reason to generate again.
func GitRepos(spec *v1alpha1.ApplicationSetSpec) []string {
	var out []string
	eachGenerator(spec, func(gen v1alpha1.ApplicationSetGenerator) {
		if gen.Git != nil {
			out = append(out, gen.Git.RepoURL)
		}
	})
	slices.Sort(out)
	return slices.Compact(out)
}

// RequeueAfter is when spec asks to be generated again without an event:
// the least requeueAfterSeconds of its generators, nested ones included,
// with Argo CD's defaults (3 minutes for git and cluster decision
// resources, 30 for SCM providers, pull requests and plugins; list and
// clusters none). 0 when none asks.
func RequeueAfter(spec *v1alpha1.ApplicationSetSpec) time.Duration {
	var least time.Duration
	ask := func(seconds *int64, def time.Duration) {
		d := def
		if seconds != nil {
			d = time.Duration(*seconds) * time.Second
		}
		if d > 0 && (least == 0 || d < least) {
			least = d
		}
	}
	eachGenerator(spec, func(gen v1alpha1.ApplicationSetGenerator) {
		switch {
		case gen.Git != nil:
			ask(gen.Git.RequeueAfterSeconds, defaultGitRequeue)
		case gen.ClusterDecisionResource != nil:
			ask(gen.ClusterDecisionResource.RequeueAfterSeconds, defaultGitRequeue)
		case gen.SCMProvider != nil:
			ask(gen.SCMProvider.RequeueAfterSeconds, defaultAPIRequeue)
		case gen.PullRequest != nil:
			ask(gen.PullRequest.RequeueAfterSeconds, defaultAPIRequeue)
		case gen.Plugin != nil:
			ask(gen.Plugin.RequeueAfterSeconds, defaultAPIRequeue)
		}
	})
	return least
}
