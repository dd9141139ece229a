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

// The seeds' rollout-bg-test.yml and its Service: the first revision goes
// live at once and the Rollout reports what Argo Rollouts reports.
func TestBlueGreenInitialDeployIsHealthy(t *testing.T) {
	c := startController(t)
	ns := cluster.Namespace(t)
	createServices(t, c, "rollout-service.yml", ns)
	ro := readRollout(t, "rollout-bg-test.yml", ns)
	create(t, c, ro)

	got := waitFor(t, c, ro, "Healthy", healthyAt)
	hash := rollout.PodTemplateHash(&ro.Spec.Template, nil)
	s := got.Status
	if s.CurrentPodHash != hash || s.StableRS != hash || s.BlueGreen.ActiveSelector != hash {
		t.Errorf("hashes: current=%s stable=%s active=%s, want all %s", s.CurrentPodHash, s.StableRS, s.BlueGreen.ActiveSelector, hash)
	}
	if s.Replicas != 2 || s.UpdatedReplicas != 2 || s.ReadyReplicas != 2 || s.AvailableReplicas != 2 || s.HPAReplicas != 2 {
		t.Errorf("counts: %s", describe(got))
	}
	if want := "app=rollout-bg,rollouts-pod-template-hash=" + hash; s.Selector != want {
		t.Errorf("selector = %q, want %q", s.Selector, want)
	}
	if s.ObservedGeneration != "1" {
		t.Errorf("observedGeneration = %q, want \"1\"", s.ObservedGeneration)
	}
	for _, ct := range []v1alpha1.RolloutConditionType{v1alpha1.RolloutAvailable, v1alpha1.RolloutProgressing, v1alpha1.RolloutHealthy, v1alpha1.RolloutCompleted} {
		if cond := condition(got, ct); cond.Status != corev1.ConditionTrue {
			t.Errorf("condition %s = %+v, want True", ct, cond)
		}
	}
	if cond := condition(got, v1alpha1.RolloutProgressing); cond.Reason != "NewReplicaSetAvailable" {
		t.Errorf("Progressing reason = %q, want NewReplicaSetAvailable", cond.Reason)
	}

	rs := replicaSets(t, c, ro)[hash]
	if rs == nil {
		t.Fatalf("no ReplicaSet with hash %s", hash)
	}
	if rs.Name != "rollout-bg-test-"+hash || rs.Annotations[AnnotationRevision] != "1" {
		t.Errorf("ReplicaSet %s revision %q, want rollout-bg-test-%s revision 1", rs.Name, rs.Annotations[AnnotationRevision], hash)
	}
	if rs.Spec.Selector.MatchLabels[rollout.PodTemplateHashLabel] != hash || rs.Spec.Template.Labels[rollout.PodTemplateHashLabel] != hash {
		t.Errorf("ReplicaSet selector %v / template labels %v lack the hash", rs.Spec.Selector.MatchLabels, rs.Spec.Template.Labels)
	}
	if owner := metav1.GetControllerOf(rs); owner == nil || owner.Kind != "Rollout" || owner.Name != ro.Name {
		t.Errorf("ReplicaSet controller = %+v, want the Rollout", owner)
	}
	var pods corev1.PodList
	if err := c.List(context.Background(), &pods, client.InNamespace(ns), client.MatchingLabels{rollout.PodTemplateHashLabel: hash}); err != nil {
		t.Fatal(err)
	}
	if len(pods.Items) != 2 {
		t.Errorf("%d pods carry the hash label, want 2", len(pods.Items))
	}
	svc := &corev1.Service{}
	if err := c.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "rollout-active-service"}, svc); err != nil {
		t.Fatal(err)
	}
	if svc.Spec.Selector[rollout.PodTemplateHashLabel] != hash || svc.Annotations[AnnotationManagedBy] != ro.Name {
		t.Errorf("active Service selector %v annotations %v", svc.Spec.Selector, svc.Annotations)
	}
}

// An image update with autoPromotionEnabled: the new revision comes up
// beside the old one, the active Service switches once it is available,
// and the old revision goes down after scaleDownDelaySeconds.
func TestBlueGreenImageUpdateAutoPromotes(t *testing.T) {
	c := startController(t)
	ns := cluster.Namespace(t)
	createServices(t, c, "rollout-service.yml", ns)
	ro := readRollout(t, "rollout-bg-test.yml", ns)
	ro.Spec.Strategy.BlueGreen.ScaleDownDelaySeconds = ptr.To[int32](4)
	create(t, c, ro)
	first := waitFor(t, c, ro, "first revision Healthy", healthyAt).Status.CurrentPodHash

	newHash := setImage(t, c, ro, "nginx:stable")
	waitUntil(t, "the active Service to switch", func() error {
		if h := serviceHash(t, c, ns, "rollout-active-service"); h != newHash {
			return fmt.Errorf("the active Service selects %s", h)
		}
		return nil
	})
	switched := time.Now()
	old := replicaSets(t, c, ro)[first]
	if ptr.Deref(old.Spec.Replicas, 0) != 2 || old.Annotations[AnnotationScaleDownDeadline] == "" {
		t.Errorf("old ReplicaSet right after the switch: replicas %d, annotations %v; want 2 and a scale-down deadline",
			ptr.Deref(old.Spec.Replicas, 0), old.Annotations)
	}
	got := waitFor(t, c, ro, "Healthy on the new revision", healthyAt)
	if got.Status.StableRS != newHash || got.Status.BlueGreen.ActiveSelector != newHash {
		t.Errorf("status after promotion: %s", describe(got))
	}
	if rs := replicaSets(t, c, ro)[newHash]; rs.Annotations[AnnotationRevision] != "2" {
		t.Errorf("new ReplicaSet revision %q, want 2", rs.Annotations[AnnotationRevision])
	}
	// The deadline is written (to the second, as Argo Rollouts does) in the
	// pass that switches, so it lies between 3 and 4 s after that pass began;
	// the switch was seen up to a poll later.
	deadline, err := time.Parse(time.RFC3339, old.Annotations[AnnotationScaleDownDeadline])
	if err != nil {
		t.Fatalf("scale-down deadline: %v", err)
	}
	if ahead := deadline.Sub(switched); ahead < time.Second || ahead > 4*time.Second {
		t.Errorf("scale-down deadline %s is %s after the switch was seen, want about the 4 s delay", deadline, ahead)
	}
	scaledDown := scaledToZero(t, c, ro, first)
	waitUntil(t, "the old revision to scale down", func() error {
		err := scaledDown()
		if err == nil && time.Now().Before(deadline) {
			t.Errorf("old revision scaled down at %s, before its deadline %s", time.Now().UTC().Format(time.RFC3339Nano), deadline)
		}
		return err
	})
}

// autoPromotionEnabled=false: the new revision is reachable through the
// preview Service and the rollout pauses (BlueGreenPause) until promoted.
func TestBlueGreenManualPromotion(t *testing.T) {
	c := startController(t)
	ns := cluster.Namespace(t)
	createServices(t, c, "rollout-service.yml", ns)
	createServices(t, c, "rollout-preview-service.yml", ns)
	ro := readRollout(t, "rollout-bg-test.yml", ns)
	ro.Spec.Strategy.BlueGreen.AutoPromotionEnabled = ptr.To(false)
	ro.Spec.Strategy.BlueGreen.PreviewService = "rollout-preview-service"
	ro.Spec.Strategy.BlueGreen.ScaleDownDelaySeconds = ptr.To[int32](1)
	create(t, c, ro)
	first := waitFor(t, c, ro, "first revision Healthy", healthyAt).Status.CurrentPodHash
	if got := serviceHash(t, c, ns, "rollout-preview-service"); got != first {
		t.Errorf("preview Service selects %q after the first deploy, want %s", got, first)
	}

	newHash := setImage(t, c, ro, "nginx:stable")
	paused := waitFor(t, c, ro, "BlueGreenPause", func(ro *v1alpha1.Rollout) bool {
		return phaseIs(v1alpha1.RolloutPhasePaused)(ro) && ro.Status.CurrentPodHash == newHash
	})
	if len(paused.Status.PauseConditions) != 1 || paused.Status.PauseConditions[0].Reason != v1alpha1.PauseReasonBlueGreenPause ||
		!paused.Status.ControllerPause || paused.Status.Message != "BlueGreenPause" {
		t.Errorf("paused status: %s controllerPause=%v", describe(paused), paused.Status.ControllerPause)
	}
	if a, p := serviceHash(t, c, ns, "rollout-active-service"), serviceHash(t, c, ns, "rollout-preview-service"); a != first || p != newHash {
		t.Errorf("while paused active=%s preview=%s, want active=%s preview=%s", a, p, first, newHash)
	}
	if counts := rsCounts(t, c, ro, newHash); counts != "2/2" {
		t.Errorf("new ReplicaSet while paused = %s, want 2/2", counts)
	}
	if paused.Status.BlueGreen.ActiveSelector != first || paused.Status.BlueGreen.PreviewSelector != newHash {
		t.Errorf("status selectors active=%s preview=%s", paused.Status.BlueGreen.ActiveSelector, paused.Status.BlueGreen.PreviewSelector)
	}

	promote(t, c, ro)
	got := waitFor(t, c, ro, "Healthy after promote", healthyAt)
	if got.Status.ControllerPause || len(got.Status.PauseConditions) > 0 || got.Status.StableRS != newHash {
		t.Errorf("status after promote: %s", describe(got))
	}
	if a := serviceHash(t, c, ns, "rollout-active-service"); a != newHash {
		t.Errorf("active Service selects %s after promote, want %s", a, newHash)
	}
	waitUntil(t, "the old revision to scale down", scaledToZero(t, c, ro, first))
}

// Aborting before promotion keeps the active Service on the stable
// revision, reports Degraded, and scales the new revision down after
// abortScaleDownDelaySeconds.
func TestBlueGreenAbortBeforePromotion(t *testing.T) {
	c := startController(t)
	ns := cluster.Namespace(t)
	createServices(t, c, "rollout-service.yml", ns)
	createServices(t, c, "rollout-preview-service.yml", ns)
	ro := readRollout(t, "rollout-bg-test.yml", ns)
	ro.Spec.Strategy.BlueGreen.AutoPromotionEnabled = ptr.To(false)
	ro.Spec.Strategy.BlueGreen.PreviewService = "rollout-preview-service"
	ro.Spec.Strategy.BlueGreen.AbortScaleDownDelaySeconds = ptr.To[int32](1)
	create(t, c, ro)
	first := waitFor(t, c, ro, "first revision Healthy", healthyAt).Status.CurrentPodHash

	newHash := setImage(t, c, ro, "nginx:stable")
	waitFor(t, c, ro, "BlueGreenPause", func(ro *v1alpha1.Rollout) bool {
		return phaseIs(v1alpha1.RolloutPhasePaused)(ro) && ro.Status.CurrentPodHash == newHash
	})
	patchStatus(t, c, ro, `{"status":{"abort":true}}`)
	got := waitFor(t, c, ro, "Degraded", phaseIs(v1alpha1.RolloutPhaseDegraded))
	if got.Status.Message != "RolloutAborted: Rollout aborted update to revision 2" {
		t.Errorf("message = %q", got.Status.Message)
	}
	if got.Status.AbortedAt == nil || got.Status.StableRS != first || got.Status.BlueGreen.ActiveSelector != first {
		t.Errorf("aborted status: %s", describe(got))
	}
	if a, p := serviceHash(t, c, ns, "rollout-active-service"), serviceHash(t, c, ns, "rollout-preview-service"); a != first || p != first {
		t.Errorf("after abort active=%s preview=%s, want both on stable %s", a, p, first)
	}
	waitUntil(t, "the aborted revision to scale down", scaledToZero(t, c, ro, newHash))
	if counts := rsCounts(t, c, ro, first); counts != "2/2" {
		t.Errorf("stable ReplicaSet after abort = %s, want 2/2", counts)
	}
}

// A missing active Service is an invalid spec: no pods, a clear message,
// and the rollout starts as soon as the Service exists.
func TestBlueGreenMissingActiveServiceCreatesNoPods(t *testing.T) {
	c := startController(t)
	ns := cluster.Namespace(t)
	ro := readRollout(t, "rollout-bg-test.yml", ns)
	create(t, c, ro)
	got := waitFor(t, c, ro, "Degraded", phaseIs(v1alpha1.RolloutPhaseDegraded))
	want := `InvalidSpec: spec.strategy.blueGreen.activeService: Invalid value: "rollout-active-service": service "rollout-active-service" not found`
	if got.Status.Message != want {
		t.Errorf("message = %q, want %q", got.Status.Message, want)
	}
	if cond := condition(got, v1alpha1.InvalidSpec); cond.Status != corev1.ConditionTrue {
		t.Errorf("InvalidSpec condition = %+v", cond)
	}
	if rss := replicaSets(t, c, ro); len(rss) != 0 {
		t.Errorf("%d ReplicaSets created without the active Service", len(rss))
	}
	createServices(t, c, "rollout-service.yml", ns)
	waitFor(t, c, ro, "Healthy once the Service exists", healthyAt)
}

// previewReplicaCount runs only that many new pods before promotion, and
// autoPromotionSeconds promotes on its own after the pause.
func TestBlueGreenPreviewReplicaCountAndAutoPromotionSeconds(t *testing.T) {
	c := startController(t)
	ns := cluster.Namespace(t)
	createServices(t, c, "rollout-service.yml", ns)
	createServices(t, c, "rollout-preview-service.yml", ns)
	ro := readRollout(t, "rollout-bg-test.yml", ns)
	ro.Spec.Replicas = ptr.To[int32](3)
	ro.Spec.Strategy.BlueGreen.PreviewService = "rollout-preview-service"
	ro.Spec.Strategy.BlueGreen.PreviewReplicaCount = ptr.To[int32](1)
	ro.Spec.Strategy.BlueGreen.AutoPromotionSeconds = 2
	ro.Spec.Strategy.BlueGreen.ScaleDownDelaySeconds = ptr.To[int32](1)
	create(t, c, ro)
	first := waitFor(t, c, ro, "first revision Healthy", healthyAt).Status.CurrentPodHash

	newHash := setImage(t, c, ro, "nginx:stable")
	waitFor(t, c, ro, "BlueGreenPause", func(ro *v1alpha1.Rollout) bool {
		return phaseIs(v1alpha1.RolloutPhasePaused)(ro) && ro.Status.CurrentPodHash == newHash
	})
	pausedAt := time.Now()
	if counts := rsCounts(t, c, ro, newHash); counts != "1/1" {
		t.Errorf("new ReplicaSet before promotion = %s, want the 1 preview pod", counts)
	}
	if a := serviceHash(t, c, ns, "rollout-active-service"); a != first {
		t.Errorf("active Service moved to %s before promotion", a)
	}
	waitFor(t, c, ro, "Healthy after autoPromotionSeconds", healthyAt)
	if waited := time.Since(pausedAt); waited < time.Second {
		t.Errorf("promoted %s after the pause, before autoPromotionSeconds (2 s)", waited)
	}
	if counts := rsCounts(t, c, ro, newHash); counts != "3/3" {
		t.Errorf("new ReplicaSet after promotion = %s, want 3/3", counts)
	}
}

// Retry after an abort (`kubectl argo rollouts retry`) runs the update
// again: the new revision comes back up and pauses for promotion.
func TestBlueGreenRetryAfterAbort(t *testing.T) {
	c := startController(t)
	ns := cluster.Namespace(t)
	createServices(t, c, "rollout-service.yml", ns)
	ro := readRollout(t, "rollout-bg-test.yml", ns)
	ro.Spec.Strategy.BlueGreen.AutoPromotionEnabled = ptr.To(false)
	ro.Spec.Strategy.BlueGreen.AbortScaleDownDelaySeconds = ptr.To[int32](1)
	create(t, c, ro)
	first := waitFor(t, c, ro, "first revision Healthy", healthyAt).Status.CurrentPodHash
	newHash := setImage(t, c, ro, "nginx:stable")
	pausedFor := func(ro *v1alpha1.Rollout) bool {
		return phaseIs(v1alpha1.RolloutPhasePaused)(ro) && ro.Status.CurrentPodHash == newHash
	}
	waitFor(t, c, ro, "BlueGreenPause", pausedFor)
	patchStatus(t, c, ro, `{"status":{"abort":true}}`)
	waitFor(t, c, ro, "Degraded", phaseIs(v1alpha1.RolloutPhaseDegraded))
	waitUntil(t, "the aborted revision to scale down", scaledToZero(t, c, ro, newHash))

	patchStatus(t, c, ro, `{"status":{"abort":false}}`)
	got := waitFor(t, c, ro, "BlueGreenPause again", pausedFor)
	if got.Status.AbortedAt != nil {
		t.Errorf("abortedAt kept after retry: %v", got.Status.AbortedAt)
	}
	if counts := rsCounts(t, c, ro, newHash); counts != "2/2" {
		t.Errorf("new ReplicaSet after retry = %s, want 2/2", counts)
	}
	if a := serviceHash(t, c, ns, "rollout-active-service"); a != first {
		t.Errorf("active Service selects %s after retry, want the stable %s", a, first)
	}
}

// scaleDownDelayRevisionLimit 1 keeps only the newest old revision up for
// its scale-down delay; the one before goes down as soon as a third
// revision is switched to.
func TestBlueGreenScaleDownDelayRevisionLimit(t *testing.T) {
	c := startController(t)
	ns := cluster.Namespace(t)
	createServices(t, c, "rollout-service.yml", ns)
	ro := readRollout(t, "rollout-bg-test.yml", ns)
	ro.Spec.Strategy.BlueGreen.ScaleDownDelaySeconds = ptr.To[int32](600)
	ro.Spec.Strategy.BlueGreen.ScaleDownDelayRevisionLimit = ptr.To[int32](1)
	create(t, c, ro)
	first := waitFor(t, c, ro, "first revision Healthy", healthyAt).Status.CurrentPodHash
	second := setImage(t, c, ro, "nginx:stable")
	waitFor(t, c, ro, "second revision Healthy", healthyAt)
	if counts := rsCounts(t, c, ro, first); !strings.HasPrefix(counts, "2/") {
		t.Errorf("first revision during its delay = %s, want still 2 pods", counts)
	}
	setImage(t, c, ro, "nginx:1.19")
	waitFor(t, c, ro, "third revision Healthy", healthyAt)
	waitUntil(t, "the first revision down, the second waiting", func() error {
		if a, b := rsCounts(t, c, ro, first), rsCounts(t, c, ro, second); !strings.HasPrefix(a, "0/") || !strings.HasPrefix(b, "2/") {
			return fmt.Errorf("first %s second %s", a, b)
		}
		return nil
	})
}

// antiAffinity gives a new revision's pods a preferred anti-affinity
// against the stable revision's pods, node by node; the first revision,
// with nothing to avoid, gets none. (kwok has one node: preferred still
// schedules there.)
func TestBlueGreenAntiAffinityAvoidsTheStablePods(t *testing.T) {
	c := startController(t)
	ns := cluster.Namespace(t)
	createServices(t, c, "rollout-service.yml", ns)
	ro := readRollout(t, "rollout-bg-test.yml", ns)
	ro.Spec.Strategy.BlueGreen.AntiAffinity = &v1alpha1.AntiAffinity{
		PreferredDuringSchedulingIgnoredDuringExecution: &v1alpha1.PreferredDuringSchedulingIgnoredDuringExecution{Weight: 1},
	}
	create(t, c, ro)
	first := waitFor(t, c, ro, "first revision Healthy", healthyAt).Status.CurrentPodHash
	if a := replicaSets(t, c, ro)[first].Spec.Template.Spec.Affinity; a != nil {
		t.Errorf("first revision affinity %+v, want none", a)
	}
	second := setImage(t, c, ro, "nginx:stable")
	waitFor(t, c, ro, "second revision Healthy", healthyAt)
	a := replicaSets(t, c, ro)[second].Spec.Template.Spec.Affinity
	if a == nil || a.PodAntiAffinity == nil || len(a.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution) != 1 {
		t.Fatalf("second revision affinity %+v, want one preferred anti-affinity term", a)
	}
	term := a.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution[0]
	if term.Weight != 1 || term.PodAffinityTerm.TopologyKey != "kubernetes.io/hostname" ||
		term.PodAffinityTerm.LabelSelector.MatchExpressions[0].Values[0] != first {
		t.Errorf("term %+v, want weight 1 against %s per hostname", term, first)
	}
}
