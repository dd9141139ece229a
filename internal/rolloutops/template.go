package rolloutops

import (
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"

	"github.com/skiffcd/skiff/internal/rollout"
)

// undefault clears one field the API server defaults in a ReplicaSet's pod
// template, when it holds the default; it reports whether it did.
type undefault func(*corev1.PodTemplateSpec) bool

// undefaults are the fields of the pod the API server fills in a pod
// template, which a Rollout's template (a custom resource, not defaulted)
// usually leaves out.
var undefaults = []undefault{
	func(t *corev1.PodTemplateSpec) bool {
		return clearDefault(&t.Spec.RestartPolicy, corev1.RestartPolicyAlways)
	},
	func(t *corev1.PodTemplateSpec) bool { return clearDefault(&t.Spec.DNSPolicy, corev1.DNSClusterFirst) },
	func(t *corev1.PodTemplateSpec) bool {
		return clearDefault(&t.Spec.SchedulerName, corev1.DefaultSchedulerName)
	},
	func(t *corev1.PodTemplateSpec) bool {
		if t.Spec.SecurityContext == nil || !apiequality.Semantic.DeepEqual(*t.Spec.SecurityContext, corev1.PodSecurityContext{}) {
			return false
		}
		t.Spec.SecurityContext = nil
		return true
	},
	func(t *corev1.PodTemplateSpec) bool {
		if p := t.Spec.TerminationGracePeriodSeconds; p == nil || *p != corev1.DefaultTerminationGracePeriodSeconds {
			return false
		}
		t.Spec.TerminationGracePeriodSeconds = nil
		return true
	},
	func(t *corev1.PodTemplateSpec) bool {
		if p := t.Spec.EnableServiceLinks; p == nil || !*p {
			return false
		}
		t.Spec.EnableServiceLinks = nil
		return true
	},
}

// containerUndefaults are the defaulted fields of a container.
var containerUndefaults = []func(*corev1.Container) bool{
	func(c *corev1.Container) bool {
		return clearDefault(&c.TerminationMessagePath, corev1.TerminationMessagePathDefault)
	},
	func(c *corev1.Container) bool {
		return clearDefault(&c.TerminationMessagePolicy, corev1.TerminationMessageReadFile)
	},
	func(c *corev1.Container) bool {
		// The default is Always for :latest or no tag, else IfNotPresent.
		return clearDefault(&c.ImagePullPolicy, corev1.PullAlways) || clearDefault(&c.ImagePullPolicy, corev1.PullIfNotPresent)
	},
	func(c *corev1.Container) bool {
		changed := false
		for i := range c.Ports {
			changed = clearDefault(&c.Ports[i].Protocol, corev1.ProtocolTCP) || changed
		}
		return changed
	},
}

// undefaultsOf lists the fields of t that hold their default, each as an
// undefault: those of the pod, and those of each container apart.
func undefaultsOf(t *corev1.PodTemplateSpec) []undefault {
	all := append([]undefault(nil), undefaults...)
	for i := range t.Spec.InitContainers {
		for _, f := range containerUndefaults {
			all = append(all, func(t *corev1.PodTemplateSpec) bool { return f(&t.Spec.InitContainers[i]) })
		}
	}
	for i := range t.Spec.Containers {
		for _, f := range containerUndefaults {
			all = append(all, func(t *corev1.PodTemplateSpec) bool { return f(&t.Spec.Containers[i]) })
		}
	}
	var applicable []undefault
	for _, u := range all {
		if u(t.DeepCopy()) {
			applicable = append(applicable, u)
		}
	}
	return applicable
}

// maxRestoreCandidates bounds the templates RestoredTemplate hashes.
const maxRestoreCandidates = 4096

func clearDefault[T comparable](field *T, def T) bool {
	var zero T
	if *field != def || def == zero {
		return false
	}
	*field = zero
	return true
}

// RestoredTemplate is the pod template to put back into a Rollout to
// return to the revision of rs: rs's template without the hash label and,
// when that gives back rs's hash, without the defaults the API server added
// to it, so the controller finds rs again instead of creating a new
// revision of the same pods. It tries the combinations of defaulted fields
// to clear, fewest kept first (a template the user wrote may set some
// defaults itself), and
// falls back to the template as stored after maxRestoreCandidates tries.
func RestoredTemplate(rs *appsv1.ReplicaSet, collisionCount *int32) *corev1.PodTemplateSpec {
	base := rs.Spec.Template.DeepCopy()
	delete(base.Labels, rollout.PodTemplateHashLabel)
	if len(base.Labels) == 0 {
		base.Labels = nil
	}
	want := podHash(rs)
	if want == "" {
		return base
	}
	applicable := undefaultsOf(base)
	// Most likely first: every default cleared, then all but one kept...
	tried := 0
	for kept := 0; kept <= len(applicable) && tried < maxRestoreCandidates; kept++ {
		var found *corev1.PodTemplateSpec
		combinations(len(applicable), kept, func(keep []bool) bool {
			tried++
			t := base.DeepCopy()
			for i, u := range applicable {
				if !keep[i] {
					u(t)
				}
			}
			if rollout.PodTemplateHash(t, collisionCount) == want {
				found = t
			}
			return found == nil && tried < maxRestoreCandidates
		})
		if found != nil {
			return found
		}
	}
	return base
}

// combinations calls f with every choice of k of n items (true: chosen)
// until f returns false.
func combinations(n, k int, f func([]bool) bool) {
	chosen := make([]bool, n)
	var rec func(from, left int) bool
	rec = func(from, left int) bool {
		if left == 0 {
			return f(chosen)
		}
		for i := from; i <= n-left; i++ {
			chosen[i] = true
			ok := rec(i+1, left-1)
			chosen[i] = false
			if !ok {
				return false
			}
		}
		return true
	}
	rec(0, k)
}
