package rollout

import (
	"os"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/skiffcd/skiff/api/v1alpha1"
)

func readTemplate(t *testing.T, file string) *corev1.PodTemplateSpec {
	t.Helper()
	data, err := os.ReadFile("testdata/" + file)
	if err != nil {
		t.Fatal(err)
	}
	tpl := &corev1.PodTemplateSpec{}
	if err := yaml.UnmarshalStrict(data, tpl); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	return tpl
}

func TestSameTemplate(t *testing.T) {
	stored := readTemplate(t, "template-in-replicaset.yml")
	// What a dry-run create of the Rollout's ReplicaSet returns: the stored
	// form, under the hash Skiff computes now.
	defaulted := stored.DeepCopy()
	defaulted.Labels[PodTemplateHashLabel] = "5f78d78c4d"
	antiAffinity := func(namespaces ...string) *corev1.Affinity {
		return &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{
				LabelSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{
					Key: PodTemplateHashLabel, Operator: metav1.LabelSelectorOpIn, Values: []string{"stable1234"},
				}}},
				Namespaces:  namespaces,
				TopologyKey: "kubernetes.io/hostname",
			}},
		}}
	}
	userTerm := corev1.PodAffinityTerm{TopologyKey: "topology.kubernetes.io/zone",
		LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "db"}}}
	roles := []*v1alpha1.PodTemplateMetadata{{Labels: map[string]string{"role": "stable"}}, {Labels: map[string]string{"role": "canary"}}}

	tests := map[string]struct {
		live     func(*corev1.PodTemplateSpec)
		desired  func(*corev1.PodTemplateSpec)
		injected MetadataKeys
		want     bool
	}{
		"the stored template under another hash is the same": {want: true},
		"defaults the API server adds count when both sides have them": {
			live:    func(t *corev1.PodTemplateSpec) { t.Spec.EnableServiceLinks = ptr(true) },
			desired: func(t *corev1.PodTemplateSpec) { t.Spec.EnableServiceLinks = ptr(true) },
			want:    true,
		},
		"another image is another template": {
			desired: func(t *corev1.PodTemplateSpec) { t.Spec.Containers[0].Image = "nginx:1.28" },
		},
		"an env var removed from the Rollout is another template": {
			desired: func(t *corev1.PodTemplateSpec) { t.Spec.Containers[0].Env = t.Spec.Containers[0].Env[:1] },
		},
		"a limit removed from the Rollout is another template": {
			desired: func(t *corev1.PodTemplateSpec) { t.Spec.Containers[0].Resources.Limits = nil },
		},
		"a label added to the Rollout is another template": {
			desired: func(t *corev1.PodTemplateSpec) { t.Labels["release"] = "2" },
		},
		"Skiff's anti-affinity term against the stable pods is not part of the template": {
			live: func(t *corev1.PodTemplateSpec) { t.Spec.Affinity = antiAffinity() },
			want: true,
		},
		"Argo Rollouts' anti-affinity term against the stable pods is not part of the template": {
			live: func(t *corev1.PodTemplateSpec) { t.Spec.Affinity = antiAffinity("team-a") },
			want: true,
		},
		"the user's own anti-affinity terms are": {
			live: func(t *corev1.PodTemplateSpec) {
				t.Spec.Affinity = antiAffinity()
				t.Spec.Affinity.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution = append(t.Spec.Affinity.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution, userTerm)
			},
		},
		"the user's own anti-affinity terms match beside the injected one": {
			live: func(t *corev1.PodTemplateSpec) {
				t.Spec.Affinity = antiAffinity()
				t.Spec.Affinity.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution = append(t.Spec.Affinity.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution, userTerm)
			},
			desired: func(t *corev1.PodTemplateSpec) {
				t.Spec.Affinity = &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{userTerm}}}
			},
			want: true,
		},
		"role metadata put on the pods is not part of the template": {
			live:     func(t *corev1.PodTemplateSpec) { t.Labels["role"] = "stable" },
			injected: RoleMetadataKeys(roles, nil),
			want:     true,
		},
		"metadata Argo Rollouts recorded as put in is not part of the template": {
			live:     func(t *corev1.PodTemplateSpec) { t.Labels["role"] = "stable"; t.Annotations["note"] = "x" },
			injected: RoleMetadataKeys(nil, map[string]string{AnnotationEphemeralMetadata: `{"labels":{"role":"stable"},"annotations":{"note":"x"}}`}),
			want:     true,
		},
		"a recorded value that does not parse ignores nothing": {
			live:     func(t *corev1.PodTemplateSpec) { t.Labels["role"] = "stable" },
			injected: RoleMetadataKeys(nil, map[string]string{AnnotationEphemeralMetadata: `{"labels":`}),
		},
		"the deprecated serviceAccount the API server copies is not compared": {
			live: func(t *corev1.PodTemplateSpec) { t.Spec.DeprecatedServiceAccount = "app" },
			want: true,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			live, desired := stored.DeepCopy(), defaulted.DeepCopy()
			if tc.live != nil {
				tc.live(live)
			}
			if tc.desired != nil {
				tc.desired(desired)
			}
			if got := SameTemplate(live, desired, tc.injected); got != tc.want {
				t.Errorf("SameTemplate = %v, want %v", got, tc.want)
			}
		})
	}
}

// The Rollout's template as written lacks what the API server defaults in
// a ReplicaSet: it has to be compared in its stored form (the controller
// gets it from a dry-run create).
func TestSameTemplateNeedsTheStoredForm(t *testing.T) {
	written, stored := readTemplate(t, "template-in-rollout.yml"), readTemplate(t, "template-in-replicaset.yml")
	if SameTemplate(stored, written, MetadataKeys{}) {
		t.Error("SameTemplate compared a written template equal to its defaulted form; the defaults would go unseen")
	}
}
