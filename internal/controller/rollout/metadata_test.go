package rollout

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/skiffcd/skiff/api/v1alpha1"
	"github.com/skiffcd/skiff/internal/rollout"
)

// podRoles lists the "role" label of the running pods of one revision,
// sorted, with "-" for a pod without one.
func podRoles(t *testing.T, c client.Client, ns, hash string) string {
	t.Helper()
	var pods corev1.PodList
	if err := c.List(context.Background(), &pods, client.InNamespace(ns), client.MatchingLabels{rollout.PodTemplateHashLabel: hash}); err != nil {
		t.Fatal(err)
	}
	var roles []string
	for _, pod := range pods.Items {
		if pod.DeletionTimestamp != nil {
			continue
		}
		role := pod.Labels["role"]
		if role == "" {
			role = "-"
		}
		roles = append(roles, role)
	}
	sort.Strings(roles)
	return strings.Join(roles, ",")
}

// rolesAre holds when the pods of the revision of hash have the roles want
// (as podRoles lists them).
func rolesAre(t *testing.T, c client.Client, ns, hash, want string) func() error {
	return func() error {
		if got := podRoles(t, c, ns, hash); got != want {
			return fmt.Errorf("pods of %s with roles %s, want %s", hash, got, want)
		}
		return nil
	}
}

// Blue-green activeMetadata and previewMetadata label the pods by role:
// the new revision's pods are "preview" until the promotion, then
// "active", and the old revision's pods lose the label.
func TestBlueGreenActiveAndPreviewMetadataLabelPods(t *testing.T) {
	c := startController(t)
	ns := cluster.Namespace(t)
	createServices(t, c, "rollout-service.yml", ns)
	ro := readRollout(t, "rollout-bg-test.yml", ns)
	ro.Spec.Strategy.BlueGreen.AutoPromotionEnabled = ptr.To(false)
	ro.Spec.Strategy.BlueGreen.ScaleDownDelaySeconds = ptr.To[int32](30)
	ro.Spec.Strategy.BlueGreen.ActiveMetadata = &v1alpha1.PodTemplateMetadata{Labels: map[string]string{"role": "active"}}
	ro.Spec.Strategy.BlueGreen.PreviewMetadata = &v1alpha1.PodTemplateMetadata{Labels: map[string]string{"role": "preview"}}
	create(t, c, ro)
	first := waitFor(t, c, ro, "first revision Healthy", healthyAt).Status.CurrentPodHash
	waitUntil(t, "the first revision's pods active", rolesAre(t, c, ns, first, "active,active"))

	second := setImage(t, c, ro, "nginx:stable")
	waitFor(t, c, ro, "BlueGreenPause", func(ro *v1alpha1.Rollout) bool {
		return phaseIs(v1alpha1.RolloutPhasePaused)(ro) && ro.Status.CurrentPodHash == second
	})
	waitUntil(t, "the preview pods labelled", rolesAre(t, c, ns, second, "preview,preview"))
	if got := podRoles(t, c, ns, first); got != "active,active" {
		t.Errorf("active pods before promotion: %s", got)
	}

	promote(t, c, ro)
	waitFor(t, c, ro, "Healthy after promotion", healthyAt)
	waitUntil(t, "the roles swapped", func() error {
		return errors.Join(rolesAre(t, c, ns, second, "active,active")(), rolesAre(t, c, ns, first, "-,-")())
	})
}
