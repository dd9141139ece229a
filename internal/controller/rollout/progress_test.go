package rollout

import (
	"strings"
	"testing"

	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/skiffcd/skiff/api/v1alpha1"
)

// unschedulable is a node selector no node matches: the pods of a template
// with it stay Pending and never become ready. (kwok's stages in
// testcluster make every scheduled pod ready, whatever its annotations.)
var unschedulable = map[string]string{"skiff.test/no-such-node": "true"}

// startStuckCanary runs a 2-replica canary whose second revision never gets
// a ready pod, and returns it with its stable and new hashes.
func startStuckCanary(t *testing.T, c client.Client, ns string, abort bool) (*v1alpha1.Rollout, string, string) {
	t.Helper()
	createServices(t, c, "canary-services.yml", ns)
	ro := readRollout(t, "canary.yml", ns)
	ro.Spec.Replicas = ptr.To[int32](2)
	ro.Spec.ProgressDeadlineSeconds = ptr.To[int32](2)
	ro.Spec.ProgressDeadlineAbort = abort
	ro.Spec.Strategy.Canary.Steps = []v1alpha1.CanaryStep{{SetWeight: ptr.To[int32](50)}, {Pause: &v1alpha1.RolloutPause{}}}
	create(t, c, ro)
	stable := waitFor(t, c, ro, "first revision Healthy", healthyAt).Status.CurrentPodHash
	stuck := editSpec(t, c, ro, func(spec *v1alpha1.RolloutSpec) {
		spec.Template.Spec.Containers[0].Image = "argoproj/rollouts-demo:bad"
		spec.Template.Spec.NodeSelector = unschedulable
	})
	return ro, stable, stuck
}

// A new revision whose pods never become ready ends Degraded at the
// progress deadline, while the stable revision keeps running.
func TestProgressDeadlineExceededIsDegraded(t *testing.T) {
	c := startController(t)
	ns := cluster.Namespace(t)
	ro, stable, stuck := startStuckCanary(t, c, ns, false)

	got := waitFor(t, c, ro, "Degraded", func(ro *v1alpha1.Rollout) bool {
		return phaseIs(v1alpha1.RolloutPhaseDegraded)(ro) && ro.Status.CurrentPodHash == stuck
	})
	want := `ProgressDeadlineExceeded: ReplicaSet "canary-demo-` + stuck + `" has timed out progressing.`
	if got.Status.Message != want {
		t.Errorf("message = %q, want %q", got.Status.Message, want)
	}
	if got.Status.Abort {
		t.Error("aborted without progressDeadlineAbort")
	}
	if counts := rsCounts(t, c, ro, stable); counts != "2/2" {
		t.Errorf("stable ReplicaSet = %s, want 2/2", counts)
	}
	if counts := rsCounts(t, c, ro, stuck); !strings.HasSuffix(counts, "/0") || counts == "0/0" {
		t.Errorf("stuck ReplicaSet = %s, want pods none of which are available", counts)
	}
}

// With progressDeadlineAbort the stuck update is aborted: the canary goes
// to 0 and the stable Service keeps selecting the stable pods.
func TestProgressDeadlineAbortKeepsStableServing(t *testing.T) {
	c := startController(t)
	ns := cluster.Namespace(t)
	ro, stable, stuck := startStuckCanary(t, c, ns, true)

	// The pass that finds the deadline passed records it and sets abort;
	// the next one aborts, as in Argo Rollouts.
	got := waitFor(t, c, ro, "aborted", func(ro *v1alpha1.Rollout) bool {
		return phaseIs(v1alpha1.RolloutPhaseDegraded)(ro) && ro.Status.CurrentPodHash == stuck && ro.Status.Abort &&
			strings.HasPrefix(ro.Status.Message, "RolloutAborted: ")
	})
	if got.Status.AbortedAt == nil {
		t.Errorf("abortedAt not set: %s", describe(got))
	}
	waitUntil(t, "the stuck canary to scale to 0", scaledToZero(t, c, ro, stuck))
	if counts := rsCounts(t, c, ro, stable); counts != "2/2" {
		t.Errorf("stable ReplicaSet = %s, want 2/2", counts)
	}
	if ss := serviceHash(t, c, ns, "canary-demo"); ss != stable {
		t.Errorf("stable Service selects %s, want %s", ss, stable)
	}
}
