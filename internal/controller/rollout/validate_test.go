package rollout

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/skiffcd/skiff/api/v1alpha1"
)

func TestValidate(t *testing.T) {
	valid := func(edit func(*v1alpha1.RolloutSpec)) *v1alpha1.Rollout {
		ro := &v1alpha1.Rollout{Spec: v1alpha1.RolloutSpec{
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "a"}},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "a"}}},
			Strategy: v1alpha1.RolloutStrategy{BlueGreen: &v1alpha1.BlueGreenStrategy{ActiveService: "active"}},
		}}
		if edit != nil {
			edit(&ro.Spec)
		}
		return ro
	}
	canary := func(steps ...v1alpha1.CanaryStep) func(*v1alpha1.RolloutSpec) {
		return func(s *v1alpha1.RolloutSpec) {
			s.Strategy = v1alpha1.RolloutStrategy{Canary: &v1alpha1.CanaryStrategy{Steps: steps}}
		}
	}
	bad := intstr.FromString("soon")
	tests := map[string]struct {
		ro   *v1alpha1.Rollout
		want string // a substring of the message; "" for a valid spec
	}{
		"a blue-green spec with an active Service is valid": {ro: valid(nil)},
		"a canary with steps is valid": {
			ro: valid(canary(v1alpha1.CanaryStep{SetWeight: ptr.To[int32](20)}, v1alpha1.CanaryStep{Pause: &v1alpha1.RolloutPause{}})),
		},
		"no selector is invalid": {
			ro: valid(func(s *v1alpha1.RolloutSpec) { s.Selector = nil }), want: "spec.selector: Required value",
		},
		"a selector that misses the template labels is invalid": {
			ro:   valid(func(s *v1alpha1.RolloutSpec) { s.Template.Labels = map[string]string{"app": "b"} }),
			want: "`selector` does not match template `labels`",
		},
		"no strategy is invalid": {
			ro: valid(func(s *v1alpha1.RolloutSpec) { s.Strategy = v1alpha1.RolloutStrategy{} }), want: "spec.strategy: Required value",
		},
		"both strategies are invalid": {
			ro:   valid(func(s *v1alpha1.RolloutSpec) { s.Strategy.Canary = &v1alpha1.CanaryStrategy{} }),
			want: "Multiple Strategies can not be listed",
		},
		"blue-green without an active Service is invalid": {
			ro: valid(func(s *v1alpha1.RolloutSpec) { s.Strategy.BlueGreen.ActiveService = "" }), want: "activeService: Required value",
		},
		"the preview Service may not be the active one": {
			ro: valid(func(s *v1alpha1.RolloutSpec) { s.Strategy.BlueGreen.PreviewService = "active" }), want: "must not be the active Service",
		},
		"a weight above 100 is invalid": {
			ro: valid(canary(v1alpha1.CanaryStep{SetWeight: ptr.To[int32](120)})), want: "steps[0].setWeight",
		},
		"an unparsable pause duration is invalid": {
			ro: valid(canary(v1alpha1.CanaryStep{Pause: &v1alpha1.RolloutPause{Duration: &bad}})), want: "steps[0].pause.duration",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got := validate(tc.ro)
			if tc.want == "" && got != "" {
				t.Fatalf("validate = %q, want valid", got)
			}
			if !strings.Contains(got, tc.want) {
				t.Fatalf("validate = %q, want it to contain %q", got, tc.want)
			}
		})
	}
}

func TestValidateWorkloadRef(t *testing.T) {
	container := corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "nginx"}}}}
	tests := map[string]struct {
		ref      *v1alpha1.ObjectRef
		template corev1.PodTemplateSpec
		want     string
	}{
		"no workloadRef is fine":                 {},
		"a Deployment reference is valid":        {ref: &v1alpha1.ObjectRef{APIVersion: "apps/v1", Kind: "Deployment", Name: "web", ScaleDown: "onsuccess"}},
		"the apiVersion may be left out":         {ref: &v1alpha1.ObjectRef{Kind: "Deployment", Name: "web"}},
		"another kind is not supported":          {ref: &v1alpha1.ObjectRef{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "web"}, want: "spec.workloadRef: Unsupported value"},
		"a name is required":                     {ref: &v1alpha1.ObjectRef{Kind: "Deployment"}, want: "spec.workloadRef.name: Required value"},
		"a template beside the reference is bad": {ref: &v1alpha1.ObjectRef{Kind: "Deployment", Name: "web"}, template: container, want: "template must be empty"},
		"an unknown scaleDown is refused":        {ref: &v1alpha1.ObjectRef{Kind: "Deployment", Name: "web", ScaleDown: "sometimes"}, want: "spec.workloadRef.scaleDown: Unsupported value"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got := validateWorkloadRef(&v1alpha1.RolloutSpec{WorkloadRef: tc.ref, Template: tc.template})
			if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
				t.Fatalf("validateWorkloadRef = %q, want %q", got, tc.want)
			}
		})
	}
}
