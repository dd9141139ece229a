package rollout

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/skiffcd/skiff/api/v1alpha1"
)

func template(image string, labels map[string]string) *corev1.PodTemplateSpec {
	return &corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: labels},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: image}}},
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
		"an empty and a nil label map hash differently, as Kubernetes does": {
			template: template("nginx:1", nil),
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
