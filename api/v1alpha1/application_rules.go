package v1alpha1

import (
	"slices"
	"strings"
	"time"
)

// Names Argo CD users and tools put on Applications. They are defined here
// once, for the controller, the API server, the CLI and the UI's API.
const (
	// AnnotationRefresh asks the Application controller for a comparison:
	// RefreshNormal asks git for new commits, RefreshHard also renders
	// again what is cached. The controller removes it.
	AnnotationRefresh = "argocd.argoproj.io/refresh"
	RefreshNormal     = "normal"
	RefreshHard       = "hard"

	// FinalizerResources makes deleting an Application delete its
	// resources first, in the foreground; FinalizerResourcesBackground in
	// the background.
	FinalizerResources           = "resources-finalizer.argocd.argoproj.io"
	FinalizerResourcesBackground = "resources-finalizer.argocd.argoproj.io/background"

	// FinalizerPostDelete keeps a deleted Application until its PostDelete
	// hooks have run and succeeded (after its resources are gone);
	// FinalizerPostDeleteCleanup then until the hooks' delete policies are
	// applied. The controller adds both to apps whose manifests hold
	// PostDelete hooks, as Argo CD does.
	FinalizerPostDelete        = "post-delete-finalizer.argocd.argoproj.io"
	FinalizerPostDeleteCleanup = "post-delete-finalizer.argocd.argoproj.io/cleanup"

	// AnnotationDeletionApproved, an RFC 3339 time, approves the prunes
	// (Prune=confirm) of operations begun until then and the deletion of
	// resources (Delete=confirm) of an app deleted until then.
	AnnotationDeletionApproved = "argocd.argoproj.io/deletion-approved"

	// DefaultProjectName is the AppProject of an Application that names
	// none.
	DefaultProjectName = "default"
)

// ProjectName is the AppProject the app belongs to: spec.project, or
// DefaultProjectName when it is empty.
func (a *Application) ProjectName() string {
	if a.Spec.Project == "" {
		return DefaultProjectName
	}
	return a.Spec.Project
}

// IsAutomated reports whether automated sync is on: spec.syncPolicy.automated
// is set and not turned off by its enabled: false.
func (a *Application) IsAutomated() bool {
	p := a.Spec.SyncPolicy
	return p != nil && p.Automated != nil && (p.Automated.Enabled == nil || *p.Automated.Enabled)
}

// ResourcesFinalizer is the resources finalizer the app carries (the last
// listed, should it carry both), or "" when deleting it leaves its
// resources.
func (a *Application) ResourcesFinalizer() string {
	found := ""
	for _, f := range a.Finalizers {
		if f == FinalizerResources || f == FinalizerResourcesBackground {
			found = f
		}
	}
	return found
}

// HasFinalizer reports whether the app carries finalizer f.
func (a *Application) HasFinalizer(f string) bool {
	return slices.Contains(a.Finalizers, f)
}

// DeletionApproved reports whether the app's deletion approval is dated
// at or after since, as Argo CD compares them (to the second). A missing
// or unreadable approval approves nothing.
func (a *Application) DeletionApproved(since time.Time) bool {
	at, err := time.Parse(time.RFC3339, a.Annotations[AnnotationDeletionApproved])
	if err != nil {
		return false
	}
	return !at.Before(since.Truncate(time.Second))
}

// SplitAnnotation reads a comma-separated annotation value as Argo CD
// reads its lists (hook types, delete policies, sync options): items
// trimmed, blanks dropped.
func SplitAnnotation(v string) []string {
	var out []string
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}
