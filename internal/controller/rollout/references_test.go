package rollout

import (
	"slices"
	"testing"

	"github.com/skiffcd/skiff/api/v1alpha1"
)

// A Rollout is indexed under every object whose events must wake it: its
// Services, its analysis templates by scope, its workloadRef's Deployment.
func TestReferences(t *testing.T) {
	analysis := func(name string, cluster bool) *v1alpha1.RolloutAnalysis {
		return &v1alpha1.RolloutAnalysis{Templates: []v1alpha1.AnalysisTemplateRef{{TemplateName: name, ClusterScope: cluster}}}
	}
	tests := map[string]struct {
		spec v1alpha1.RolloutSpec
		want []string
	}{
		"a blue-green Rollout names its active and preview Services and its pre-promotion template": {
			spec: v1alpha1.RolloutSpec{Strategy: v1alpha1.RolloutStrategy{BlueGreen: &v1alpha1.BlueGreenStrategy{
				ActiveService: "active", PreviewService: "preview", PrePromotionAnalysis: analysis("smoke", false)}}},
			want: []string{"Service/active", "Service/preview", "AnalysisTemplate/smoke"},
		},
		"a blue-green Rollout without a preview Service names no empty one": {
			spec: v1alpha1.RolloutSpec{Strategy: v1alpha1.RolloutStrategy{BlueGreen: &v1alpha1.BlueGreenStrategy{ActiveService: "active"}}},
			want: []string{"Service/active"},
		},
		"a canary names its Services, its background and step templates by scope, and its workload": {
			spec: v1alpha1.RolloutSpec{
				WorkloadRef: &v1alpha1.ObjectRef{Kind: "Deployment", Name: "web"},
				Strategy: v1alpha1.RolloutStrategy{Canary: &v1alpha1.CanaryStrategy{
					CanaryService: "canary", StableService: "stable",
					Analysis: &v1alpha1.RolloutAnalysisBackground{RolloutAnalysis: *analysis("error-rate", true)},
					Steps:    []v1alpha1.CanaryStep{{Analysis: analysis("smoke", false)}}}}},
			want: []string{"Service/canary", "Service/stable", "ClusterAnalysisTemplate/error-rate", "AnalysisTemplate/smoke", "Deployment/web"},
		},
		"a plain canary names nothing": {
			spec: v1alpha1.RolloutSpec{Strategy: v1alpha1.RolloutStrategy{Canary: &v1alpha1.CanaryStrategy{}}},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got := references(&v1alpha1.Rollout{Spec: tc.spec})
			if !slices.Equal(got, tc.want) {
				t.Errorf("references = %q, want %q", got, tc.want)
			}
		})
	}
	if got := references(&v1alpha1.AnalysisRun{}); got != nil {
		t.Errorf("an AnalysisRun is indexed under %q", got)
	}
}
