// Package appcli holds the logic behind `skiff app`: building and editing
// Applications from flags, the two backends (the API server, or --core
// running internal/appops over a kubeconfig), following operations,
// printing tables and diffs. The operations themselves are appops'; this
// layer alone names flags in its messages. The cobra wiring lives in
// cmd/skiff.
package appcli

import (
	"fmt"
	"strings"

	"github.com/skiffcd/skiff/api/v1alpha1"
)

// Names of the flags SpecFlags reads, shared by create and set.
const (
	FlagRepo          = "repo"
	FlagPath          = "path"
	FlagRevision      = "revision"
	FlagDestServer    = "dest-server"
	FlagDestNamespace = "dest-namespace"
	FlagProject       = "project"
	FlagSyncPolicy    = "sync-policy"
	FlagAutoPrune     = "auto-prune"
	FlagSelfHeal      = "self-heal"
	FlagSyncOption    = "sync-option"
	FlagHelmSet       = "helm-set"
	FlagValues        = "values"
)

// SpecFlags are the Application fields `app create` and `app set` take as
// flags, named as in `argocd app create`.
type SpecFlags struct {
	Repo, Path, Revision, DestServer, DestNamespace, Project string
	// SyncPolicy is "automated" (or "auto", "automatic") or "none" (or "manual").
	SyncPolicy          string
	AutoPrune, SelfHeal bool
	// SyncOptions are Name=value sync options, replacing options of the same name.
	SyncOptions []string
	// HelmSets are name=value Helm parameters; ValueFiles are Helm value files.
	HelmSets, ValueFiles []string
}

// Apply writes the flags for which set reports true into app.
func (f SpecFlags) Apply(app *v1alpha1.Application, set func(flag string) bool) error {
	if app.Spec.Source == nil && len(app.Spec.Sources) == 0 {
		app.Spec.Source = &v1alpha1.ApplicationSource{}
	}
	src := app.Spec.Source
	sourceFlags := []string{FlagRepo, FlagPath, FlagRevision, FlagHelmSet, FlagValues}
	if src == nil {
		for _, name := range sourceFlags {
			if set(name) {
				return fmt.Errorf("--%s: the application has several sources (spec.sources); edit it with kubectl", name)
			}
		}
		src = &v1alpha1.ApplicationSource{}
	}
	if set(FlagRepo) {
		src.RepoURL = f.Repo
	}
	if set(FlagPath) {
		src.Path = f.Path
	}
	if set(FlagRevision) {
		src.TargetRevision = f.Revision
	}
	if set(FlagHelmSet) || set(FlagValues) {
		if src.Helm == nil {
			src.Helm = &v1alpha1.ApplicationSourceHelm{}
		}
		if set(FlagValues) {
			src.Helm.ValueFiles = f.ValueFiles
		}
		for _, kv := range f.HelmSets {
			name, value, ok := strings.Cut(kv, "=")
			if !ok || name == "" {
				return fmt.Errorf("--helm-set %q: want name=value", kv)
			}
			src.Helm.Parameters = setHelmParameter(src.Helm.Parameters, name, value)
		}
	}
	if set(FlagDestServer) {
		app.Spec.Destination.Server = f.DestServer
	}
	if set(FlagDestNamespace) {
		app.Spec.Destination.Namespace = f.DestNamespace
	}
	if set(FlagProject) {
		app.Spec.Project = f.Project
	}
	return f.applyPolicy(app, set)
}

func (f SpecFlags) applyPolicy(app *v1alpha1.Application, set func(string) bool) error {
	policy := app.Spec.SyncPolicy
	if policy == nil {
		policy = &v1alpha1.SyncPolicy{}
	}
	if set(FlagSyncPolicy) {
		switch strings.ToLower(f.SyncPolicy) {
		case "automated", "auto", "automatic":
			if policy.Automated == nil {
				policy.Automated = &v1alpha1.SyncPolicyAutomated{}
			}
		case "none", "manual", "":
			policy.Automated = nil
		default:
			return fmt.Errorf("--sync-policy %q: want automated or none", f.SyncPolicy)
		}
	}
	for _, name := range []string{FlagAutoPrune, FlagSelfHeal} {
		if set(name) && policy.Automated == nil {
			return fmt.Errorf("--%s needs automated sync (--sync-policy automated)", name)
		}
	}
	if set(FlagAutoPrune) {
		policy.Automated.Prune = f.AutoPrune
	}
	if set(FlagSelfHeal) {
		policy.Automated.SelfHeal = f.SelfHeal
	}
	if set(FlagSyncOption) {
		for _, opt := range f.SyncOptions {
			name, _, ok := strings.Cut(opt, "=")
			if !ok || name == "" {
				return fmt.Errorf("--sync-option %q: want Name=value", opt)
			}
			policy.SyncOptions = setSyncOption(policy.SyncOptions, name, opt)
		}
	}
	if policy.Automated == nil && len(policy.SyncOptions) == 0 && policy.Retry == nil && policy.ManagedNamespaceMetadata == nil {
		policy = nil
	}
	app.Spec.SyncPolicy = policy
	return nil
}

func setHelmParameter(params []v1alpha1.HelmParameter, name, value string) []v1alpha1.HelmParameter {
	for i := range params {
		if params[i].Name == name {
			params[i].Value = value
			return params
		}
	}
	return append(params, v1alpha1.HelmParameter{Name: name, Value: value})
}

func setSyncOption(opts []string, name, opt string) []string {
	for i, o := range opts {
		if n, _, _ := strings.Cut(o, "="); n == name {
			opts[i] = opt
			return opts
		}
	}
	return append(opts, opt)
}

// ParseResource reads a --resource value, GROUP:KIND:NAME or
// GROUP:KIND:NAMESPACE/NAME as `argocd app sync` takes it.
func ParseResource(s string) (v1alpha1.SyncOperationResource, error) {
	parts := strings.Split(s, ":")
	if len(parts) != 3 || parts[1] == "" || parts[2] == "" {
		return v1alpha1.SyncOperationResource{}, fmt.Errorf("--resource %q: want GROUP:KIND:NAME or GROUP:KIND:NAMESPACE/NAME", s)
	}
	res := v1alpha1.SyncOperationResource{Group: parts[0], Kind: parts[1], Name: parts[2]}
	if ns, name, ok := strings.Cut(parts[2], "/"); ok {
		res.Namespace, res.Name = ns, name
	}
	return res, nil
}
