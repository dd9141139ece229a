// Package appcli holds the logic behind `skiff app`: building and editing
// Applications from flags, requesting and following operations, rendering
// tables and diffs. The cobra wiring lives in cmd/skiff.
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

// RollbackOperation returns the sync that rolls app back to history entry
// id, or to the entry before the last one when id is negative. Like Argo CD
// it refuses while automated sync is on, which would undo the rollback.
func RollbackOperation(app *v1alpha1.Application, id int64, prune bool) (*v1alpha1.SyncOperation, error) {
	if app.IsAutomated() {
		return nil, fmt.Errorf("rollback cannot be initiated when auto-sync is enabled; disable it first (skiff app set %s --sync-policy none)", app.Name)
	}
	history := app.Status.History
	var entry *v1alpha1.RevisionHistory
	if id < 0 {
		if len(history) < 2 {
			return nil, fmt.Errorf("application %s has no previous deployment to roll back to", app.Name)
		}
		entry = &history[len(history)-2]
	} else {
		for i := range history {
			if history[i].ID == id {
				entry = &history[i]
			}
		}
		if entry == nil {
			return nil, fmt.Errorf("application %s has no history entry %d", app.Name, id)
		}
	}
	op := &v1alpha1.SyncOperation{Prune: prune}
	if len(entry.Sources) > 0 {
		op.Sources, op.Revisions = entry.Sources, entry.Revisions
		return op, nil
	}
	// The source as that sync wrote it, pinned to its revision (Argo CD's
	// rollback): the render sees the targetRevision it saw then.
	src := entry.Source
	if src.RepoURL == "" && app.Spec.Source != nil {
		src = *app.Spec.Source
	}
	op.Source, op.Revision = &src, entry.Revision
	return op, nil
}

// SetFinalizers returns finalizers with the resources finalizer for
// cascade (foreground or background propagation), or without any for no
// cascade.
func SetFinalizers(finalizers []string, cascade bool, propagation string) ([]string, error) {
	var want string
	if cascade {
		switch strings.ToLower(propagation) {
		case "", "foreground":
			want = v1alpha1.FinalizerResources
		case "background":
			want = v1alpha1.FinalizerResourcesBackground
		default:
			return nil, fmt.Errorf("--propagation-policy %q: want foreground or background", propagation)
		}
	}
	out := make([]string, 0, len(finalizers)+1)
	for _, f := range finalizers {
		if f != v1alpha1.FinalizerResources && f != v1alpha1.FinalizerResourcesBackground {
			out = append(out, f)
		}
	}
	if want != "" {
		out = append(out, want)
	}
	return out, nil
}
