package main

import (
	"context"
	"fmt"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/skiffcd/skiff/api/v1alpha1"
	"github.com/skiffcd/skiff/internal/kubeclient"
	"github.com/skiffcd/skiff/internal/testwait"
)

// checkDemo waits for what a newcomer should see after `make run`: both
// demo apps Synced and Healthy, and the Rollout promoting the image the
// demo commits (its stable ReplicaSet changes to one running green).
func checkDemo(ctx context.Context, t *testing.T, cfg *rest.Config) {
	t.Helper()
	scheme, err := kubeclient.NewScheme()
	if err != nil {
		t.Fatal(err)
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"guestbook", demoRolloutApp} {
		testwait.Eventually(t, "demo app "+name+" to be Synced and Healthy", func() error {
			var app v1alpha1.Application
			if err := c.Get(ctx, types.NamespacedName{Namespace: "argocd", Name: name}, &app); err != nil {
				return err
			}
			if app.Status.Sync.Status != v1alpha1.SyncStatusCodeSynced || app.Status.Health.Status != v1alpha1.HealthStatusHealthy {
				return fmt.Errorf("%s and %s", app.Status.Sync.Status, app.Status.Health.Status)
			}
			return nil
		}, testwait.Timeout(3*time.Minute), testwait.Interval(time.Second))
	}
	testwait.Eventually(t, "the demo Rollout to promote "+demoImageAfter, func() error {
		var ro v1alpha1.Rollout
		if err := c.Get(ctx, types.NamespacedName{Namespace: "bluegreen-demo", Name: "bluegreen-demo"}, &ro); err != nil {
			return err
		}
		image := ro.Spec.Template.Spec.Containers[0].Image
		if image != demoImageAfter {
			return fmt.Errorf("image %s", image)
		}
		if ro.Status.StableRS == "" || ro.Status.StableRS != ro.Status.CurrentPodHash || ro.Status.Phase != v1alpha1.RolloutPhaseHealthy {
			return fmt.Errorf("stable %q, current %q, phase %s", ro.Status.StableRS, ro.Status.CurrentPodHash, ro.Status.Phase)
		}
		return nil
	}, testwait.Timeout(3*time.Minute), testwait.Interval(time.Second))
}
