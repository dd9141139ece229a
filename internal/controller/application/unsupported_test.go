package application

import (
	"testing"

	"k8s.io/utils/ptr"

	"github.com/skiffcd/skiff/api/v1alpha1"
)

// What Skiff accepts but does not do is named in the UnsupportedField
// condition, never dropped in silence.
func TestUnsupportedFields(t *testing.T) {
	source := v1alpha1.ApplicationSource{RepoURL: "https://git.example.com/app.git", Path: "app"}
	tests := map[string]struct {
		spec v1alpha1.ApplicationSpec
		want string
	}{
		"a plain app has none": {
			spec: v1alpha1.ApplicationSpec{Source: &source},
		},
		"sync options turned on that Skiff does not implement are named": {
			spec: v1alpha1.ApplicationSpec{Source: &source, SyncPolicy: &v1alpha1.SyncPolicy{
				SyncOptions: []string{"CreateNamespace=true", "RespectIgnoreDifferences=true", "ClientSideApplyMigration=true", "Force=true"}}},
			want: "accepted but not implemented: spec.syncPolicy.syncOptions ClientSideApplyMigration=true, Force=true",
		},
		"those options turned off are not": {
			spec: v1alpha1.ApplicationSpec{Source: &source, SyncPolicy: &v1alpha1.SyncPolicy{
				SyncOptions: []string{"ClientSideApplyMigration=false"}}},
		},
		"a plugin source and managed namespace metadata are named": {
			spec: v1alpha1.ApplicationSpec{
				Source:     &v1alpha1.ApplicationSource{RepoURL: source.RepoURL, Plugin: &v1alpha1.ApplicationSourcePlugin{Name: "cmp"}},
				SyncPolicy: &v1alpha1.SyncPolicy{ManagedNamespaceMetadata: &v1alpha1.ManagedNamespaceMetadata{}, Automated: &v1alpha1.SyncPolicyAutomated{Prune: true, Enabled: ptr.To(true)}},
			},
			want: "accepted but not implemented: spec.syncPolicy.managedNamespaceMetadata, source 1: plugin",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			app := &v1alpha1.Application{Spec: tc.spec}
			if got := unsupportedFields(app); got != tc.want {
				t.Errorf("unsupportedFields() = %q, want %q", got, tc.want)
			}
		})
	}
}
