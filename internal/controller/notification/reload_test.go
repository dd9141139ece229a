package notification

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/skiffcd/skiff/api/v1alpha1"
	"github.com/skiffcd/skiff/internal/notify"
	"github.com/skiffcd/skiff/internal/testwait"
)

// TestConfigMapEditAppliesWithoutRestart changes a template between two
// syncs; the second message uses the new template.
func TestConfigMapEditAppliesWithoutRestart(t *testing.T) {
	ns := cluster.Namespace(t)
	c, r := startController(t, ns)
	slack := startFakeSlack(t)
	config := func(message string) map[string]string {
		return map[string]string{
			"service.slack":               "token: $slack-token\napiURL: " + slack.URL,
			"template.app-sync-succeeded": "message: \"" + message + " {{.app.status.sync.revision}}\"",
		}
	}
	secret := map[string]string{"slack-token": "xoxb-reload"}
	applyConfig(t, c, ns, config("first template"), secret)
	app := createApp(t, c, ns, "reloaded", map[string]string{"notifications.argoproj.io/subscribe.on-sync-succeeded.slack": "deploys"})
	start := time.Now()
	updateApp(t, c, app, synced("r1", start, v1alpha1.HealthStatusHealthy))
	testwait.Eventually(t, "the first message", func() bool { return len(slack.matching("first template r1")) == 1 })

	applyConfig(t, c, ns, config("second template"), secret)
	var cm corev1.ConfigMap
	if err := c.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: notify.ConfigMapName}, &cm); err != nil {
		t.Fatal(err)
	}
	// The controller's own cache must have seen the edit before the sync.
	testwait.Eventually(t, "the controller to see the edit", func() bool {
		var seen corev1.ConfigMap
		err := r.config.cache.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: notify.ConfigMapName}, &seen)
		return err == nil && seen.ResourceVersion == cm.ResourceVersion
	})
	updateApp(t, c, app, synced("r2", start.Add(time.Minute), v1alpha1.HealthStatusHealthy))
	testwait.Eventually(t, "the second message", func() bool { return len(slack.matching("second template r2")) == 1 })
	if n := len(slack.matching("first template")); n != 1 {
		t.Errorf("%d messages from the old template, want 1", n)
	}
}
