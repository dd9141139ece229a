package rollout

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/skiffcd/skiff/api/v1alpha1"
)

// antiAffinityTopologyKey spreads a new revision's pods away from the
// stable revision's, node by node, as Argo Rollouts does.
const antiAffinityTopologyKey = "kubernetes.io/hostname"

// ReplicaSetAffinity returns the affinity of a new revision's pods: the
// template's, plus, when the strategy asks for antiAffinity and a different
// stable revision runs, a pod anti-affinity term against the stable pods
// (preferred with its weight, or required).
func ReplicaSetAffinity(template *corev1.Affinity, anti *v1alpha1.AntiAffinity, stableHash, newHash string) *corev1.Affinity {
	affinity := template.DeepCopy()
	if anti == nil || stableHash == "" || stableHash == newHash {
		return affinity
	}
	term := corev1.PodAffinityTerm{
		LabelSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{
			Key: PodTemplateHashLabel, Operator: metav1.LabelSelectorOpIn, Values: []string{stableHash},
		}}},
		TopologyKey: antiAffinityTopologyKey,
	}
	if affinity == nil {
		affinity = &corev1.Affinity{}
	}
	if affinity.PodAntiAffinity == nil {
		affinity.PodAntiAffinity = &corev1.PodAntiAffinity{}
	}
	pod := affinity.PodAntiAffinity
	if preferred := anti.PreferredDuringSchedulingIgnoredDuringExecution; preferred != nil {
		pod.PreferredDuringSchedulingIgnoredDuringExecution = append(pod.PreferredDuringSchedulingIgnoredDuringExecution,
			corev1.WeightedPodAffinityTerm{Weight: preferred.Weight, PodAffinityTerm: term})
		return affinity
	}
	pod.RequiredDuringSchedulingIgnoredDuringExecution = append(pod.RequiredDuringSchedulingIgnoredDuringExecution, term)
	return affinity
}
