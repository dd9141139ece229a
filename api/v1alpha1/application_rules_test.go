package v1alpha1

import (
	"slices"
	"testing"
	"time"
)

func TestProjectName(t *testing.T) {
	tests := map[string]struct {
		project, want string
	}{
		"an app that names no project belongs to the default one": {project: "", want: "default"},
		"an app that names a project belongs to it":               {project: "team-a", want: "team-a"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			app := &Application{Spec: ApplicationSpec{Project: tc.project}}
			if got := app.ProjectName(); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestIsAutomated(t *testing.T) {
	on, off := true, false
	tests := map[string]struct {
		policy *SyncPolicy
		want   bool
	}{
		"no sync policy is manual":                      {policy: nil, want: false},
		"a policy without automated is manual":          {policy: &SyncPolicy{SyncOptions: []string{"CreateNamespace=true"}}, want: false},
		"automated without enabled is on":               {policy: &SyncPolicy{Automated: &SyncPolicyAutomated{}}, want: true},
		"automated with enabled true is on":             {policy: &SyncPolicy{Automated: &SyncPolicyAutomated{Enabled: &on}}, want: true},
		"automated with enabled false is off (Argo CD)": {policy: &SyncPolicy{Automated: &SyncPolicyAutomated{Enabled: &off}}, want: false},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			app := &Application{Spec: ApplicationSpec{SyncPolicy: tc.policy}}
			if got := app.IsAutomated(); got != tc.want {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}

func TestResourcesFinalizer(t *testing.T) {
	tests := map[string]struct {
		finalizers []string
		want       string
	}{
		"no finalizers leave the resources":              {finalizers: nil, want: ""},
		"other finalizers leave the resources":           {finalizers: []string{"example.com/keep"}, want: ""},
		"the foreground finalizer is found among others": {finalizers: []string{"example.com/keep", FinalizerResources}, want: FinalizerResources},
		"the background finalizer is found":              {finalizers: []string{FinalizerResourcesBackground}, want: FinalizerResourcesBackground},
		"of both, the last listed counts":                {finalizers: []string{FinalizerResourcesBackground, FinalizerResources}, want: FinalizerResources},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			app := &Application{}
			app.Finalizers = tc.finalizers
			if got := app.ResourcesFinalizer(); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestSplitAnnotation(t *testing.T) {
	tests := map[string]struct {
		value string
		want  []string
	}{
		"one item":                          {value: "PreSync", want: []string{"PreSync"}},
		"items are trimmed":                 {value: "PreSync, Sync ,PostSync", want: []string{"PreSync", "Sync", "PostSync"}},
		"blank items are dropped":           {value: "Prune=false,, ,Validate=false,", want: []string{"Prune=false", "Validate=false"}},
		"an empty value is no item at all":  {value: ""},
		"a value of only commas is no item": {value: " , ,"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := SplitAnnotation(tc.value); !slices.Equal(got, tc.want) {
				t.Errorf("SplitAnnotation(%q) = %q, want %q", tc.value, got, tc.want)
			}
		})
	}
}

func TestDeletionApproved(t *testing.T) {
	since := time.Date(2026, 12, 7, 14, 0, 0, 500_000_000, time.UTC)
	tests := map[string]struct {
		approval string
		want     bool
	}{
		"no approval approves nothing":                  {approval: "", want: false},
		"an unreadable approval approves nothing":       {approval: "yes", want: false},
		"an approval older than since approves nothing": {approval: "2026-12-07T13:59:59Z", want: false},
		"an approval in the same second approves":       {approval: "2026-12-07T14:00:00Z", want: true},
		"a later approval approves":                     {approval: "2026-12-07T15:30:00+01:00", want: true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			app := &Application{}
			if tc.approval != "" {
				app.Annotations = map[string]string{AnnotationDeletionApproved: tc.approval}
			}
			if got := app.DeletionApproved(since); got != tc.want {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}
