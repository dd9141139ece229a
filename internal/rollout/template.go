package rollout

import (
	"encoding/json"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/skiffcd/skiff/api/v1alpha1"
)

// AnnotationEphemeralMetadata is where Argo Rollouts records, on a
// ReplicaSet, the role metadata it put into the pod template.
const AnnotationEphemeralMetadata = "rollout.argoproj.io/ephemeral-metadata"

// MetadataKeys are label and annotation keys of pod metadata.
type MetadataKeys struct {
	Labels, Annotations map[string]bool
}

// RoleMetadataKeys lists the keys the role metadata of a strategy
// (activeMetadata and previewMetadata, or stableMetadata and canaryMetadata)
// manage on pod templates and pods, plus those Argo Rollouts recorded in a
// ReplicaSet's annotations as put in (recorded may be nil).
func RoleMetadataKeys(roles []*v1alpha1.PodTemplateMetadata, recorded map[string]string) MetadataKeys {
	keys := MetadataKeys{Labels: map[string]bool{}, Annotations: map[string]bool{}}
	add := func(md *v1alpha1.PodTemplateMetadata) {
		if md == nil {
			return
		}
		for k := range md.Labels {
			keys.Labels[k] = true
		}
		for k := range md.Annotations {
			keys.Annotations[k] = true
		}
	}
	for _, md := range roles {
		add(md)
	}
	if data := recorded[AnnotationEphemeralMetadata]; data != "" {
		var md v1alpha1.PodTemplateMetadata
		// A value that does not parse recorded nothing usable.
		if json.Unmarshal([]byte(data), &md) == nil {
			add(&md)
		}
	}
	return keys
}

// SameTemplate says whether a ReplicaSet's pod template (live) runs the pods
// of a Rollout's template (desired, as the API server stores it for a new
// ReplicaSet: defaulted), the way Argo Rollouts finds the ReplicaSet of a
// template whose hash changed. It ignores what the controllers put in: the
// pod-template-hash label, the anti-affinity term against the stable pods,
// the role metadata keys in injected, and the deprecated serviceAccount
// field. Defaults are compared as set on both sides, so a Kubernetes API
// upgrade that adds a defaulted PodSpec field changes nothing, while any
// field the user changed, added or removed does.
func SameTemplate(live, desired *corev1.PodTemplateSpec, injected MetadataKeys) bool {
	return equality.Semantic.DeepEqual(forComparison(live, injected), forComparison(desired, injected))
}

// forComparison is a copy of t without what SameTemplate ignores.
func forComparison(t *corev1.PodTemplateSpec, injected MetadataKeys) *corev1.PodTemplateSpec {
	t = t.DeepCopy()
	t.Labels = without(t.Labels, injected.Labels, PodTemplateHashLabel)
	t.Annotations = without(t.Annotations, injected.Annotations)
	t.Spec.DeprecatedServiceAccount = ""
	t.Spec.Affinity = withoutInjectedAntiAffinity(t.Spec.Affinity)
	return t
}

// without returns m without keys (and extra); nil when nothing is left, as
// an empty and an absent map mean the same.
func without(m map[string]string, keys map[string]bool, extra ...string) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		if !keys[k] {
			out[k] = v
		}
	}
	for _, k := range extra {
		delete(out, k)
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// withoutInjectedAntiAffinity removes the pod anti-affinity terms that
// select pods by pod-template-hash (those Skiff's ReplicaSetAffinity and
// Argo Rollouts add against the stable pods), and what becomes empty.
func withoutInjectedAntiAffinity(a *corev1.Affinity) *corev1.Affinity {
	if a == nil || a.PodAntiAffinity == nil {
		return a
	}
	anti := a.PodAntiAffinity
	var required []corev1.PodAffinityTerm
	for _, term := range anti.RequiredDuringSchedulingIgnoredDuringExecution {
		if !selectsByHash(term.LabelSelector) {
			required = append(required, term)
		}
	}
	var preferred []corev1.WeightedPodAffinityTerm
	for _, term := range anti.PreferredDuringSchedulingIgnoredDuringExecution {
		if !selectsByHash(term.PodAffinityTerm.LabelSelector) {
			preferred = append(preferred, term)
		}
	}
	anti.RequiredDuringSchedulingIgnoredDuringExecution = required
	anti.PreferredDuringSchedulingIgnoredDuringExecution = preferred
	if required == nil && preferred == nil {
		a.PodAntiAffinity = nil
	}
	if a.PodAntiAffinity == nil && a.PodAffinity == nil && a.NodeAffinity == nil {
		return nil
	}
	return a
}

func selectsByHash(s *metav1.LabelSelector) bool {
	if s == nil {
		return false
	}
	for _, e := range s.MatchExpressions {
		if e.Key == PodTemplateHashLabel {
			return true
		}
	}
	return false
}
