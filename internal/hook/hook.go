// Package hook says which rendered objects are sync hooks and of which
// types, as Argo CD reads its own and Helm's hook annotations. The sync
// engine's plan, the Application controller's comparison and the API's and
// CLI's diffs all ask it, so that they agree on what is part of an app's
// state: a hook runs during syncs and is never compared.
package hook

import (
	"slices"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/skiffcd/skiff/api/v1alpha1"
)

// Annotations that make an object a hook and say when it runs and goes.
const (
	AnnotationHook             = "argocd.argoproj.io/hook"
	AnnotationDeletePolicy     = "argocd.argoproj.io/hook-delete-policy"
	AnnotationHelmHook         = "helm.sh/hook"
	AnnotationHelmWeight       = "helm.sh/hook-weight"
	AnnotationHelmDeletePolicy = "helm.sh/hook-delete-policy"
)

// Type is when a hook runs: Argo CD's hook types.
type Type string

// The hook types: the three sync phases, SyncFail (only when a sync fails),
// PostDelete (once the app's resources are deleted with the app, never
// during a sync) and Skip (never run, nor applied).
const (
	PreSync    Type = "PreSync"
	Sync       Type = "Sync"
	PostSync   Type = "PostSync"
	SyncFail   Type = "SyncFail"
	PostDelete Type = "PostDelete"
	Skip       Type = "Skip"
)

// Delete policies: when a hook's object is deleted.
const (
	HookSucceeded      = "HookSucceeded"
	HookFailed         = "HookFailed"
	BeforeHookCreation = "BeforeHookCreation"
)

// helmTypes maps the Helm hooks Argo CD runs to its hook types.
var helmTypes = map[string]Type{
	"pre-install": PreSync, "pre-upgrade": PreSync,
	"post-install": PostSync, "post-upgrade": PostSync,
	"crd-install": PreSync,
	"post-delete": PostDelete,
}

// helmDeletePolicies maps Helm's delete policies to Argo CD's.
var helmDeletePolicies = map[string]string{
	"hook-succeeded": HookSucceeded, "hook-failed": HookFailed, "before-hook-creation": BeforeHookCreation,
}

// IsHook reports whether obj carries an Argo CD or a Helm hook annotation:
// it is not part of the app's state, whatever its types.
func IsHook(obj *unstructured.Unstructured) bool {
	ann := obj.GetAnnotations()
	_, argo := ann[AnnotationHook]
	_, helm := ann[AnnotationHelmHook]
	return argo || helm
}

// Types returns the hook types of obj, none when it is not a hook. Argo
// CD's annotation is taken as written; of Helm's, the hooks Argo CD does
// not run (test hooks, delete and rollback hooks) make a hook of type Skip.
func Types(obj *unstructured.Unstructured) []Type {
	ann := obj.GetAnnotations()
	if v, ok := ann[AnnotationHook]; ok {
		var types []Type
		for _, t := range v1alpha1.SplitAnnotation(v) {
			types = append(types, Type(t))
		}
		return types
	}
	v, ok := ann[AnnotationHelmHook]
	if !ok {
		return nil
	}
	var types []Type
	for _, h := range v1alpha1.SplitAnnotation(v) {
		if t, ok := helmTypes[h]; ok {
			types = append(types, t)
		}
	}
	if len(types) == 0 {
		return []Type{Skip}
	}
	return types
}

// DeletePolicies returns when a hook's object is deleted: its Argo CD
// annotation, else its Helm one translated, else Argo CD's default,
// BeforeHookCreation (the previous run's hook is replaced when created).
func DeletePolicies(obj *unstructured.Unstructured) []string {
	ann := obj.GetAnnotations()
	if v, ok := ann[AnnotationDeletePolicy]; ok {
		return v1alpha1.SplitAnnotation(v)
	}
	if v, ok := ann[AnnotationHelmDeletePolicy]; ok {
		var out []string
		for _, p := range v1alpha1.SplitAnnotation(v) {
			if policy, ok := helmDeletePolicies[p]; ok {
				out = append(out, policy)
			}
		}
		return out
	}
	return []string{BeforeHookCreation}
}

// IsPostDelete reports whether obj is a hook that runs after its app's
// deletion (of type PostDelete, or Helm's post-delete).
func IsPostDelete(obj *unstructured.Unstructured) bool {
	return slices.Contains(Types(obj), PostDelete)
}

// RunsInSync reports whether a sync runs hooks of type t: neither Skip
// nor PostDelete hooks are ever applied by one.
func RunsInSync(t Type) bool {
	return t != Skip && t != PostDelete
}

// IsHelmTest reports whether obj is a `helm test` hook.
func IsHelmTest(obj *unstructured.Unstructured) bool {
	return slices.ContainsFunc(v1alpha1.SplitAnnotation(obj.GetAnnotations()[AnnotationHelmHook]), func(h string) bool {
		return h == "test" || h == "test-success"
	})
}
