package rollout

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/skiffcd/skiff/api/v1alpha1"
	"github.com/skiffcd/skiff/internal/rollout"
)

// spec.paused (`kubectl argo rollouts pause`) holds an update before its
// ReplicaSet exists; unpausing lets it run its steps.
func TestPausedRolloutHoldsTheUpdate(t *testing.T) {
	c := startController(t)
	ns := cluster.Namespace(t)
	ro, first := firstRevision(t, c, ns, "canary-services.yml", "canary.yml")
	stable := first.Status.CurrentPodHash

	canary := editSpec(t, c, ro, func(spec *v1alpha1.RolloutSpec) {
		spec.Paused = true
		spec.Template.Spec.Containers[0].Image = "argoproj/rollouts-demo:yellow"
	})
	got := waitFor(t, c, ro, "manually paused", func(ro *v1alpha1.Rollout) bool {
		return phaseIs(v1alpha1.RolloutPhasePaused)(ro) && ro.Status.CurrentPodHash == canary
	})
	if got.Status.Message != "manually paused" {
		t.Errorf("message = %q, want \"manually paused\"", got.Status.Message)
	}
	if rs := replicaSets(t, c, ro)[canary]; rs != nil {
		t.Errorf("ReplicaSet %s created while paused", rs.Name)
	}
	if counts := rsCounts(t, c, ro, stable); counts != "10/10" {
		t.Errorf("stable ReplicaSet while paused = %s, want 10/10", counts)
	}

	editSpec(t, c, ro, func(spec *v1alpha1.RolloutSpec) { spec.Paused = false })
	waitAtPause(t, c, ro, canary, 1)
	waitForSplit(t, c, ro, canary, stable, "2/2", "8/8")
}

// spec.restartAt (`kubectl argo rollouts restart`) replaces every pod
// created before it and records status.restartedAt.
func TestRestartReplacesOlderPods(t *testing.T) {
	c := startController(t)
	ns := cluster.Namespace(t)
	createServices(t, c, "rollout-service.yml", ns)
	ro := readRollout(t, "rollout-bg-test.yml", ns)
	ro.Spec.Replicas = ptr.To[int32](3)
	create(t, c, ro)
	waitFor(t, c, ro, "Healthy", healthyAt)
	before := podNames(t, c, ns)

	// A second ahead, so no pod created before it shares its second.
	restartAt := metav1.NewTime(time.Now().Add(time.Second).Truncate(time.Second).Add(time.Second))
	editSpec(t, c, ro, func(spec *v1alpha1.RolloutSpec) { spec.RestartAt = &restartAt })
	got := waitFor(t, c, ro, "restartedAt", func(ro *v1alpha1.Rollout) bool {
		return ro.Status.RestartedAt != nil && ro.Status.RestartedAt.Equal(&restartAt)
	})
	for name := range podNames(t, c, ns) {
		if before[name] {
			t.Errorf("pod %s from before restartAt is still running", name)
		}
	}
	if got.Status.CurrentPodHash != rollout.PodTemplateHash(&got.Spec.Template, nil) {
		t.Errorf("restart changed the revision: %s", describe(got))
	}
	waitFor(t, c, ro, "Healthy after the restart", healthyAt)
}

// podNames lists the pods of ns that are not being deleted.
func podNames(t *testing.T, c client.Client, ns string) map[string]bool {
	t.Helper()
	var pods corev1.PodList
	if err := c.List(context.Background(), &pods, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, p := range pods.Items {
		if p.DeletionTimestamp.IsZero() {
			names[p.Name] = true
		}
	}
	return names
}

// revisionHistoryLimit keeps that many old ReplicaSets (at 0 replicas) and
// deletes older ones.
func TestRevisionHistoryLimitDeletesOldReplicaSets(t *testing.T) {
	c := startController(t)
	ns := cluster.Namespace(t)
	createServices(t, c, "rollout-service.yml", ns)
	ro := readRollout(t, "rollout-bg-test.yml", ns) // revisionHistoryLimit: 2
	ro.Spec.Strategy.BlueGreen.ScaleDownDelaySeconds = ptr.To[int32](0)
	create(t, c, ro)
	first := waitFor(t, c, ro, "Healthy", healthyAt).Status.CurrentPodHash
	var last string
	for _, tag := range []string{"1.25", "1.26", "1.27"} {
		last = setImage(t, c, ro, "nginx:"+tag)
		waitFor(t, c, ro, "Healthy on nginx:"+tag, healthyAt)
	}
	waitUntil(t, "three ReplicaSets left", func() error {
		rss := replicaSets(t, c, ro)
		if len(rss) == 3 && rss[first] == nil && rss[last] != nil {
			return nil
		}
		var names []string
		for _, rs := range rss {
			names = append(names, rs.Name+"="+rs.Annotations[AnnotationRevision])
		}
		return fmt.Errorf("ReplicaSets %s", strings.Join(names, " "))
	})
}
