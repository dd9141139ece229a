package appset

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"text/template"

	"github.com/Masterminds/sprig/v3"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/yaml"

	"github.com/skiffcd/skiff/api/v1alpha1"
	"github.com/skiffcd/skiff/internal/appops"
)

// Options are the spec's rendering settings.
type Options struct {
	// GoTemplate renders with text/template and sprig instead of `{{param}}`.
	GoTemplate bool
	// GoTemplateOptions are text/template options ("missingkey=error").
	GoTemplateOptions []string
	// PreserveResourcesOnDeletion leaves out the resources finalizer that
	// a template without finalizers otherwise gets.
	PreserveResourcesOnDeletion bool

	// templates caches parsed Go templates by text within one Generate or
	// Applications call: parsing, with sprig's functions copied in each
	// time, was nine tenths of rendering a thousand apps (0.46 s, 0.04 s
	// cached). nil: no cache.
	templates map[string]*template.Template
}

// withCache returns opts with a template cache of its own, for one caller.
func (o Options) withCache() Options {
	o.templates = map[string]*template.Template{}
	return o
}

// OptionsOf reads the rendering settings of spec.
func OptionsOf(spec *v1alpha1.ApplicationSetSpec) Options {
	return Options{
		GoTemplate:                  spec.GoTemplate,
		GoTemplateOptions:           spec.GoTemplateOptions,
		PreserveResourcesOnDeletion: spec.SyncPolicy != nil && spec.SyncPolicy.PreserveResourcesOnDeletion,
	}
}

// funcs are sprig's functions without those that read the environment or
// the network, and Argo CD's own: normalize, slugify, toYaml, fromYaml,
// fromYamlArray.
var funcs = func() template.FuncMap {
	f := sprig.TxtFuncMap()
	for _, name := range []string{"env", "expandenv", "getHostByName"} {
		delete(f, name)
	}
	f["normalize"] = sanitizeName
	f["slugify"] = slugify
	f["toYaml"] = func(v any) (string, error) {
		out, err := yaml.Marshal(v)
		return strings.TrimSuffix(string(out), "\n"), err
	}
	f["fromYaml"] = func(s string) (map[string]any, error) {
		var m map[string]any
		return m, yaml.Unmarshal([]byte(s), &m)
	}
	f["fromYamlArray"] = func(s string) ([]any, error) {
		var a []any
		return a, yaml.Unmarshal([]byte(s), &a)
	}
	return f
}()

// slugify is Argo CD's: a lower-case name of "-"-joined words of letters
// and digits, cut at maxSize (default 50) characters, at a word boundary
// when smartTruncate (default true).
func slugify(args ...any) (string, error) {
	maxSize, smart, text := 50, true, ""
	switch len(args) {
	case 1:
		text = fmt.Sprint(args[0])
	case 3:
		n, ok := args[0].(int)
		b, ok2 := args[1].(bool)
		if !ok || !ok2 {
			return "", errors.New("slugify takes (maxSize int, smartTruncate bool, text) or (text)")
		}
		maxSize, smart, text = n, b, fmt.Sprint(args[2])
	default:
		return "", errors.New("slugify takes (maxSize int, smartTruncate bool, text) or (text)")
	}
	words := strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return (r < 'a' || r > 'z') && (r < '0' || r > '9')
	})
	out := strings.Join(words, "-")
	if len(out) <= maxSize {
		return out, nil
	}
	cut := out[:maxSize]
	if i := strings.LastIndexByte(cut, '-'); smart && i > 0 {
		cut = cut[:i]
	}
	return strings.Trim(cut, "-"), nil
}

// goTemplateOption checks an option before text/template, which panics on
// an unknown one.
func goTemplateOption(o string) error {
	switch o {
	case "missingkey=default", "missingkey=invalid", "missingkey=zero", "missingkey=error":
		return nil
	}
	return fmt.Errorf("goTemplateOptions: unknown option %q (known: missingkey=default|invalid|zero|error)", o)
}

// renderString renders one string: `{{param}}` substitution, or a Go
// template with goTemplate.
func renderString(s string, p Params, opts Options) (string, error) {
	if !strings.Contains(s, "{{") {
		return s, nil
	}
	if !opts.GoTemplate {
		return substitute(s, p)
	}
	t, err := parse(s, opts)
	if err != nil {
		return "", err
	}
	var out bytes.Buffer
	if err := t.Execute(&out, map[string]any(p)); err != nil {
		return "", fmt.Errorf("executing template %q: %w", s, err)
	}
	return out.String(), nil
}

// parse parses a Go template with the options, through opts' cache.
func parse(s string, opts Options) (*template.Template, error) {
	if t, ok := opts.templates[s]; ok {
		return t, nil
	}
	t := template.New("").Funcs(funcs)
	for _, o := range opts.GoTemplateOptions {
		if err := goTemplateOption(o); err != nil {
			return nil, err
		}
		t = t.Option(o)
	}
	t, err := t.Parse(s)
	if err != nil {
		return nil, fmt.Errorf("parsing template %q: %w", s, err)
	}
	if opts.templates != nil {
		opts.templates[s] = t
	}
	return t, nil
}

// substitute replaces each {{ name }} whose trimmed name is a string
// parameter and leaves the others as written (fasttemplate, as Argo CD
// uses it); a "{{" without its "}}" is an error.
func substitute(s string, p Params) (string, error) {
	var out strings.Builder
	for {
		start := strings.Index(s, "{{")
		if start < 0 {
			out.WriteString(s)
			return out.String(), nil
		}
		end := strings.Index(s[start+2:], "}}")
		if end < 0 {
			return "", fmt.Errorf("template %q: a {{ has no closing }}", s)
		}
		tag := s[start+2 : start+2+end]
		out.WriteString(s[:start])
		if v, ok := p[strings.TrimSpace(tag)].(string); ok && strings.TrimSpace(tag) != "" {
			out.WriteString(v)
		} else {
			out.WriteString("{{" + tag + "}}")
		}
		s = s[start+2+end+2:]
	}
}

// renderValue renders every string of a JSON value, map keys included
// (Argo CD templates keys, such as annotation names, too).
func renderValue(v any, p Params, opts Options) (any, error) {
	switch v := v.(type) {
	case string:
		return renderString(v, p, opts)
	case map[string]any:
		out := make(map[string]any, len(v))
		for _, k := range slices.Sorted(maps.Keys(v)) {
			rk, err := renderString(k, p, opts)
			if err != nil {
				return nil, err
			}
			rv, err := renderValue(v[k], p, opts)
			if err != nil {
				return nil, err
			}
			out[rk] = rv
		}
		return out, nil
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			rv, err := renderValue(e, p, opts)
			if err != nil {
				return nil, err
			}
			out[i] = rv
		}
		return out, nil
	}
	return v, nil
}

// renderInto renders in (any JSON-marshalable value) with p and decodes
// the result into out.
func renderInto(in any, p Params, opts Options, out any) error {
	js, err := json.Marshal(in)
	if err != nil {
		return err
	}
	var tree any
	if err := json.Unmarshal(js, &tree); err != nil {
		return err
	}
	rendered, err := renderValue(tree, p, opts)
	if err != nil {
		return err
	}
	if js, err = json.Marshal(rendered); err != nil {
		return err
	}
	return json.Unmarshal(js, out)
}

// MergeTemplate is the template of a generator with an override: the
// override's non-empty fields win, maps merge key by key (Argo CD merges
// the generator's template over the spec's with mergo).
func MergeTemplate(base v1alpha1.ApplicationSetTemplate, override *v1alpha1.ApplicationSetTemplate) (v1alpha1.ApplicationSetTemplate, error) {
	if override == nil {
		return base, nil
	}
	b, err := toMap(base)
	if err != nil {
		return base, err
	}
	o, err := toMap(override)
	if err != nil {
		return base, err
	}
	var out v1alpha1.ApplicationSetTemplate
	js, err := json.Marshal(mergeNested(b, o, true))
	if err != nil {
		return base, err
	}
	if err := json.Unmarshal(js, &out); err != nil {
		return base, fmt.Errorf("merging the generator's template: %w", err)
	}
	return out, nil
}

func toMap(v any) (map[string]any, error) {
	js, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	return m, json.Unmarshal(js, &m)
}

// Render makes the Application of one parameter set: the template's
// strings rendered, then templatePatch (itself rendered) merged in as a
// strategic merge patch, as Argo CD applies it. The Application is checked
// (name, labels, source, destination); its namespace is the template's,
// empty for the ApplicationSet's.
func Render(tmpl v1alpha1.ApplicationSetTemplate, templatePatch *string, p Params, opts Options) (*v1alpha1.Application, error) {
	var rendered v1alpha1.ApplicationSetTemplate
	if err := renderInto(tmpl, p, opts, &rendered); err != nil {
		if name, nameErr := renderString(tmpl.Metadata.Name, p, opts); nameErr == nil && name != "" {
			return nil, fmt.Errorf("application %q: %w", name, err)
		}
		return nil, err
	}
	app := &v1alpha1.Application{
		TypeMeta: metav1.TypeMeta{APIVersion: v1alpha1.GroupVersion.String(), Kind: "Application"},
		Spec:     rendered.Spec,
	}
	m := rendered.Metadata
	app.Name, app.Namespace, app.Labels, app.Annotations, app.Finalizers = m.Name, m.Namespace, m.Labels, m.Annotations, m.Finalizers
	if templatePatch != nil && strings.TrimSpace(*templatePatch) != "" {
		patched, err := applyPatch(app, *templatePatch, p, opts)
		if err != nil {
			return nil, fmt.Errorf("application %q: templatePatch: %w", app.Name, err)
		}
		app = patched
	}
	if len(app.Finalizers) == 0 && !opts.PreserveResourcesOnDeletion {
		app.Finalizers = []string{v1alpha1.FinalizerResources}
	}
	if err := check(app); err != nil {
		return nil, err
	}
	return app, nil
}

// applyPatch renders the patch and merges it into app.
func applyPatch(app *v1alpha1.Application, patch string, p Params, opts Options) (*v1alpha1.Application, error) {
	text, err := renderString(patch, p, opts)
	if err != nil {
		return nil, err
	}
	patchJSON, err := yaml.YAMLToJSON([]byte(text))
	if err != nil {
		return nil, fmt.Errorf("reading the rendered patch: %w", err)
	}
	appJSON, err := json.Marshal(app)
	if err != nil {
		return nil, err
	}
	out, err := strategicpatch.StrategicMergePatch(appJSON, patchJSON, v1alpha1.Application{})
	if err != nil {
		return nil, err
	}
	var patched v1alpha1.Application
	if err := json.Unmarshal(out, &patched); err != nil {
		return nil, fmt.Errorf("the patched Application: %w", err)
	}
	return &patched, nil
}

// check reports what makes app one the API server or the controller would
// refuse, naming the app.
func check(app *v1alpha1.Application) error {
	if app.Name == "" {
		return errors.New("a rendered Application has no metadata.name")
	}
	if err := appops.CheckSpec(app); err != nil {
		return fmt.Errorf("application %q: %w", app.Name, err)
	}
	for k, v := range app.Labels {
		msgs := append(validation.IsQualifiedName(k), validation.IsValidLabelValue(v)...)
		if len(msgs) > 0 {
			return fmt.Errorf("application %q: label %s=%q: %s", app.Name, k, v, strings.Join(msgs, "; "))
		}
	}
	return nil
}
