package v1alpha1

import "strings"

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
