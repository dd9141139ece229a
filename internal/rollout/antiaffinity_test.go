package rollout

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/skiffcd/skiff/api/v1alpha1"
)

func TestReplicaSetAffinity(t *testing.T) {
	preferred := &v1alpha1.AntiAffinity{PreferredDuringSchedulingIgnoredDuringExecution: &v1alpha1.PreferredDuringSchedulingIgnoredDuringExecution{Weight: 40}}
	required := &v1alpha1.AntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &v1alpha1.RequiredDuringSchedulingIgnoredDuringExecution{}}
	userTerm := corev1.PodAffinityTerm{TopologyKey: "zone"}
	withUserRule := &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{userTerm}}}
	tests := map[string]struct {
		template     *corev1.Affinity
		anti         *v1alpha1.AntiAffinity
		stable       string
		wantRequired int
		wantWeight   int32
	}{
		"without antiAffinity the template's affinity stays": {template: withUserRule, stable: "old", wantRequired: 1},
		"the first revision has no stable pods to avoid":     {anti: required},
		"required avoids the stable pods":                    {anti: required, stable: "old", wantRequired: 1},
		"preferred adds a weighted term":                     {anti: preferred, stable: "old", wantWeight: 40},
		"the user's own rules are kept":                      {template: withUserRule, anti: required, stable: "old", wantRequired: 2},
		"a rollback to the stable revision avoids nothing":   {anti: required, stable: "new"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got := ReplicaSetAffinity(tc.template, tc.anti, tc.stable, "new")
			var required []corev1.PodAffinityTerm
			var weighted []corev1.WeightedPodAffinityTerm
			if got != nil && got.PodAntiAffinity != nil {
				required = got.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution
				weighted = got.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution
			}
			if len(required) != tc.wantRequired {
				t.Errorf("%d required terms, want %d", len(required), tc.wantRequired)
			}
			if tc.wantWeight != 0 && (len(weighted) != 1 || weighted[0].Weight != tc.wantWeight) {
				t.Errorf("weighted terms %+v, want one of weight %d", weighted, tc.wantWeight)
			}
			injected := append(required, func() []corev1.PodAffinityTerm {
				var out []corev1.PodAffinityTerm
				for _, w := range weighted {
					out = append(out, w.PodAffinityTerm)
				}
				return out
			}()...)
			for _, term := range injected {
				if term.TopologyKey == "zone" {
					continue
				}
				if term.TopologyKey != "kubernetes.io/hostname" || term.LabelSelector.MatchExpressions[0].Values[0] != tc.stable ||
					term.LabelSelector.MatchExpressions[0].Key != PodTemplateHashLabel {
					t.Errorf("injected term %+v, want the stable hash %s per hostname", term, tc.stable)
				}
			}
			if tc.template != nil && len(tc.template.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution) != 1 {
				t.Error("the template's affinity was changed in place")
			}
		})
	}
}
