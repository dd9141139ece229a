package rollout

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/skiffcd/skiff/api/v1alpha1"
)

func template(image string, labels map[string]string) *corev1.PodTemplateSpec {
	return &corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: labels},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: image}}},
	}
}

// argoTestTemplate is the template of Argo Rollouts' own hash unit test
// (utils/hash, generatePodTemplate("red")).
func argoTestTemplate() *corev1.PodTemplateSpec {
	return &corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"name": "red"}},
		Spec: corev1.PodSpec{
			Containers: []corev1.Container{{
				Name: "red", Image: "red", ImagePullPolicy: corev1.PullAlways,
				TerminationMessagePath: corev1.TerminationMessagePathDefault,
			}},
			DNSPolicy: corev1.DNSClusterFirst, RestartPolicy: corev1.RestartPolicyAlways,
			SecurityContext: &corev1.PodSecurityContext{},
		},
	}
}

// The hashes below were computed by Argo Rollouts v1.10.2's own
// utils/hash.ComputePodTemplateHash (built against k8s.io/api v0.34.5) and,
// for the takeover templates, put on ReplicaSets by its controller (see
// TestTakeoverFromArgoRolloutsChangesNothing): Skiff must name the
// ReplicaSets of a Rollout as Argo Rollouts does.
func TestPodTemplateHashIsArgoRollouts(t *testing.T) {
	tests := map[string]struct {
		template  *corev1.PodTemplateSpec
		collision *int32
		want      string
	}{
		"Argo Rollouts' unit test template": {
			template: argoTestTemplate(), want: "5f78d78c4d",
		},
		"Argo Rollouts' unit test template after one collision": {
			template: argoTestTemplate(), collision: ptr[int32](1), want: "b7c685cd5",
		},
		"an empty template": {
			template: &corev1.PodTemplateSpec{}, want: "658c46c486",
		},
		"the template of the takeover test's blue-green Rollout, as its ReplicaSet is named by the real controller": {
			template: readTemplate(t, "template-in-rollout.yml"), want: "7b8f7755fb",
		},
		"a template with ports and resources": {
			template: &corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{
					Name: "web", Image: "nginx:1.27",
					Ports:     []corev1.ContainerPort{{ContainerPort: 80, Protocol: corev1.ProtocolTCP}},
					Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("10m")}},
				}}},
			},
			want: "bf6869795",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := PodTemplateHash(tc.template, tc.collision); got != tc.want {
				t.Errorf("PodTemplateHash = %s, Argo Rollouts computes %s", got, tc.want)
			}
		})
	}
}

func TestPodTemplateHash(t *testing.T) {
	base := PodTemplateHash(template("nginx:1", map[string]string{"app": "a"}), nil)
	tests := map[string]struct {
		template  *corev1.PodTemplateSpec
		collision *int32
		wantSame  bool
	}{
		"the same template hashes the same": {
			template: template("nginx:1", map[string]string{"app": "a"}), wantSame: true,
		},
		"another image hashes differently": {
			template: template("nginx:2", map[string]string{"app": "a"}),
		},
		"another label hashes differently": {
			template: template("nginx:1", map[string]string{"app": "b"}),
		},
		"a collision count hashes differently": {
			template: template("nginx:1", map[string]string{"app": "a"}), collision: ptr[int32](1),
		},
		"a field left unset hashes as before it existed": {
			template: func() *corev1.PodTemplateSpec {
				tpl := template("nginx:1", map[string]string{"app": "a"})
				tpl.Spec.HostUsers, tpl.Spec.Resources, tpl.Spec.SchedulingGates = nil, nil, []corev1.PodSchedulingGate{}
				return tpl
			}(),
			wantSame: true,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got := PodTemplateHash(tc.template, tc.collision)
			if (got == base) != tc.wantSame {
				t.Errorf("hash %q against base %q: same=%v, want same=%v", got, base, got == base, tc.wantSame)
			}
			if got == "" || len(got) > 10 {
				t.Errorf("hash %q is not a short label value", got)
			}
		})
	}
}

func TestPodTemplateHashIsStableAcrossCalls(t *testing.T) {
	tpl := template("nginx:latest", map[string]string{"app": "rollout-bg"})
	first := PodTemplateHash(tpl, nil)
	for range 10 {
		if got := PodTemplateHash(tpl.DeepCopy(), nil); got != first {
			t.Fatalf("hash changed between calls: %q then %q", first, got)
		}
	}
}

func TestStepHash(t *testing.T) {
	canary := func(weights ...int32) v1alpha1.RolloutStrategy {
		c := &v1alpha1.CanaryStrategy{}
		for _, w := range weights {
			c.Steps = append(c.Steps, v1alpha1.CanaryStep{SetWeight: ptr(w)})
		}
		return v1alpha1.RolloutStrategy{Canary: c}
	}
	tests := map[string]struct {
		a, b     v1alpha1.RolloutStrategy
		wantSame bool
		wantNone bool
	}{
		"the same steps hash the same":     {a: canary(20, 40), b: canary(20, 40), wantSame: true},
		"other steps hash differently":     {a: canary(20, 40), b: canary(20, 50)},
		"blue-green has no step hash":      {a: v1alpha1.RolloutStrategy{BlueGreen: &v1alpha1.BlueGreenStrategy{}}, wantNone: true},
		"a canary without steps is hashed": {a: canary(), b: canary(), wantSame: true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			a := StepHash(tc.a)
			if tc.wantNone {
				if a != "" {
					t.Errorf("StepHash = %q, want none", a)
				}
				return
			}
			if b := StepHash(tc.b); (a == b) != tc.wantSame {
				t.Errorf("hashes %q and %q: same=%v, want %v", a, b, a == b, tc.wantSame)
			}
		})
	}
}
