package browser

import (
	"context"
	"fmt"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/skiffcd/skiff/api/v1alpha1"
	"github.com/skiffcd/skiff/internal/testcluster"
	"github.com/skiffcd/skiff/internal/testwait"
)

// A canary paused at its pause step is promoted from its page and
// completes, the page following without a reload.
func TestRolloutPromote(t *testing.T) {
	p := newPage(t, 1400, 900)
	ns := env.cluster.Namespace(t)
	ro := &v1alpha1.Rollout{}
	testcluster.ReadYAML(t, "testdata/rollout-canary.yaml", ro, ns)
	ctx := context.Background()
	// Pods of a namespace's first seconds wait for its default ServiceAccount.
	testwait.Eventually(t, "the default ServiceAccount in "+ns, func() error {
		return env.k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "default"}, &corev1.ServiceAccount{})
	})
	if err := env.k8s.Create(ctx, ro); err != nil {
		t.Fatal(err)
	}
	// The first revision goes straight to Healthy; the second stops at the pause.
	waitRollout(t, ro, "Healthy", func(r *v1alpha1.Rollout) bool { return r.Status.Phase == v1alpha1.RolloutPhaseHealthy })
	patch := client.MergeFrom(ro.DeepCopy())
	ro.Spec.Template.Spec.Containers[0].Image = "argoproj/rollouts-demo:yellow"
	if err := env.k8s.Patch(ctx, ro, patch); err != nil {
		t.Fatal(err)
	}
	waitRollout(t, ro, "paused at step 1", func(r *v1alpha1.Rollout) bool {
		return r.Status.Phase == v1alpha1.RolloutPhasePaused && r.Status.CurrentStepIndex != nil && *r.Status.CurrentStepIndex == 1
	})

	p.login("admin", env.password)
	p.click(tid("nav-rollouts"))
	tile := `[data-testid="rollout-tile-rollouts-demo"][data-namespace="` + ns + `"]`
	p.visible(tile, 30*time.Second)
	p.screenshot("01-rollouts")
	p.click(tile)
	p.until("the rollout Paused at its pause step", attrIs(tid("rollout-phase"), "data-status", "Paused")+" && "+
		attrIs(tid("rollout-step-1"), "data-state", "current")+" && "+attrIs(tid("rollout-step-0"), "data-state", "done"), 30*time.Second)
	p.until("the rollout stream open", attrIs(tid("live-indicator"), "data-state", "live"), 15*time.Second)
	p.until("20% to the canary", attrIs(tid("rollout-weights"), "data-canary", "20"), 10*time.Second)
	p.until("two revisions with pods", `document.querySelectorAll('[data-testid^="revision-"]').length === 2 && document.querySelectorAll('[data-testid="pod-dot"]').length >= 5`, 30*time.Second)
	if p.exists(tid("rollout-retry")) && !p.disabled(tid("rollout-retry")) {
		t.Error("Retry is offered on a rollout that was not aborted")
	}
	p.markNoReload()
	p.screenshot("02-paused")

	p.click(tid("rollout-promote"))
	p.until("the rollout Healthy on the new image", attrIs(tid("rollout-phase"), "data-status", "Healthy")+
		` && document.querySelector('[data-testid="rollout-steps"] li:last-child')?.classList.contains('step-done')`, 90*time.Second)
	p.checkNoReload()
	p.screenshot("03-promoted")
	p.viewport(390, 844)
	p.screenshot("04-phone")

	// A readonly user sees the rollout but none of its actions.
	addReadonlyUser(t, "ro", "ro-password-1")
	ro2 := newPage(t, 1280, 800)
	ro2.login("ro", "ro-password-1")
	ro2.open("/rollouts/" + ns + "/rollouts-demo")
	ro2.until("the rollout Healthy", attrIs(tid("rollout-phase"), "data-status", "Healthy"), 30*time.Second)
	ro2.screenshot("05-readonly")
	if n := ro2.count(tid("rollout-actions") + " button"); n != 0 {
		t.Errorf("a readonly user sees %d rollout actions", n)
	}
	waitRollout(t, ro, "Healthy on the new image", func(r *v1alpha1.Rollout) bool {
		return r.Status.Phase == v1alpha1.RolloutPhaseHealthy && r.Status.StableRS == r.Status.CurrentPodHash
	})
}

// waitRollout polls the Rollout until cond holds (up to 90 s).
func waitRollout(t *testing.T, ro *v1alpha1.Rollout, what string, cond func(*v1alpha1.Rollout) bool) {
	t.Helper()
	err := testwait.Until(context.Background(), what, func() error {
		if err := env.k8s.Get(context.Background(), client.ObjectKeyFromObject(ro), ro); err != nil {
			return err
		}
		if !cond(ro) {
			return fmt.Errorf("phase %s", ro.Status.Phase)
		}
		return nil
	}, testwait.Timeout(90*time.Second), testwait.Interval(200*time.Millisecond))
	if err != nil {
		var rss appsv1.ReplicaSetList
		_ = env.k8s.List(context.Background(), &rss, client.InNamespace(ro.Namespace))
		var events corev1.EventList
		_ = env.k8s.List(context.Background(), &events, client.InNamespace(ro.Namespace))
		for _, rs := range rss.Items {
			t.Logf("replicaset %s: spec %d, status %+v", rs.Name, ptr.Deref(rs.Spec.Replicas, -1), rs.Status)
		}
		for _, e := range events.Items {
			t.Logf("event %s %s: %s", e.InvolvedObject.Name, e.Reason, e.Message)
		}
		t.Fatalf("rollout %s: %v (status %+v)", ro.Name, err, ro.Status)
	}
}
