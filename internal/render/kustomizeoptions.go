package render

import (
	"fmt"
	"strings"

	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/api/types"
)

// KustomizeOptions are the `kustomize build` flags Argo CD users set for
// every app in argocd-cm's kustomize.buildOptions. The zero value is
// kustomize's defaults.
type KustomizeOptions struct {
	// LoadRestrictorNone lets a kustomization read files outside its own
	// directory (--load-restrictor LoadRestrictionsNone); the render still
	// reads nothing outside the repository.
	LoadRestrictorNone bool `json:",omitempty"`
	// Reorder is --reorder: "legacy", "none" or "" (kustomize's default).
	Reorder string `json:",omitempty"`
	// ManagedByLabel is --enable-managedby-label.
	ManagedByLabel bool `json:",omitempty"`
}

// unsupportedKustomizeFlags are `kustomize build` flags that run programs
// or reach outside the repository, which a render never does: why, and
// whether the flag takes a value.
var unsupportedKustomizeFlags = map[string]struct {
	why        string
	takesValue bool
}{
	"enable-helm":          {"Skiff runs no helm binary for kustomize's helmCharts; use a Helm source", false},
	"helm-command":         {"Skiff runs no helm binary", true},
	"helm-api-versions":    {"Skiff runs no helm binary", true},
	"helm-kube-version":    {"Skiff runs no helm binary", true},
	"helm-debug":           {"Skiff runs no helm binary", false},
	"enable-alpha-plugins": {"kustomize plugins run programs; a render runs none", false},
	"enable-exec":          {"kustomize exec plugins run programs; a render runs none", false},
	"enable-star":          {"kustomize plugins run programs; a render runs none", false},
	"as-current-user":      {"a render runs no plugin", false},
	"env":                  {"a render runs no plugin to pass the environment to", true},
	"mount":                {"a render reads only its repository", true},
	"network":              {"a render has no network", false},
	"network-name":         {"a render has no network", true},
}

// ParseKustomizeBuildOptions reads argocd-cm's kustomize.buildOptions, the
// flags of `kustomize build` as one string. Each flag it cannot honour is
// one error; the flags it can still apply.
func ParseKustomizeBuildOptions(s string) (KustomizeOptions, []error) {
	var o KustomizeOptions
	var errs []error
	args := strings.Fields(s)
	for i := 0; i < len(args); i++ {
		arg := args[i]
		if !strings.HasPrefix(arg, "--") {
			errs = append(errs, fmt.Errorf("%q is not a flag", arg))
			continue
		}
		name, value, hasValue := strings.Cut(strings.TrimPrefix(arg, "--"), "=")
		// value takes the flag's value, from "--flag=value" or the next argument.
		takeValue := func() (string, bool) {
			if hasValue {
				return value, true
			}
			if i+1 < len(args) && !strings.HasPrefix(args[i+1], "--") {
				i++
				return args[i], true
			}
			return "", false
		}
		switch name {
		case "load-restrictor", "load_restrictor":
			v, ok := takeValue()
			switch {
			case !ok:
				errs = append(errs, fmt.Errorf("--%s needs a value", name))
			case v == types.LoadRestrictionsNone.String() || v == "none":
				o.LoadRestrictorNone = true
			case v == types.LoadRestrictionsRootOnly.String() || v == "rootOnly":
				o.LoadRestrictorNone = false
			default:
				errs = append(errs, fmt.Errorf("--%s %q: want %s or %s", name, v, types.LoadRestrictionsRootOnly, types.LoadRestrictionsNone))
			}
		case "reorder":
			v, ok := takeValue()
			switch {
			case !ok:
				errs = append(errs, fmt.Errorf("--reorder needs a value"))
			case v == string(krusty.ReorderOptionLegacy), v == string(krusty.ReorderOptionNone):
				o.Reorder = v
			default:
				errs = append(errs, fmt.Errorf("--reorder %q: want legacy or none", v))
			}
		case "enable-managedby-label":
			o.ManagedByLabel = !hasValue || value == "true"
		case "output", "o":
			takeValue() // where kustomize writes; a render keeps its output
		default:
			if flag, known := unsupportedKustomizeFlags[name]; known {
				if flag.takesValue {
					takeValue()
				}
				errs = append(errs, fmt.Errorf("--%s is not supported: %s", name, flag.why))
				continue
			}
			errs = append(errs, fmt.Errorf("--%s is not a flag of kustomize build", name))
		}
	}
	return o, errs
}

// krustyOptions are kustomize's build options with o applied.
func (o KustomizeOptions) krustyOptions() *krusty.Options {
	opts := krusty.MakeDefaultOptions()
	if o.LoadRestrictorNone {
		opts.LoadRestrictions = types.LoadRestrictionsNone
	}
	if o.Reorder != "" {
		opts.Reorder = krusty.ReorderOption(o.Reorder)
	}
	opts.AddManagedbyLabel = o.ManagedByLabel
	return opts
}
