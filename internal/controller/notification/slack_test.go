package notification

import (
	"strings"
	"testing"
	"time"

	"github.com/skiffcd/skiff/api/v1alpha1"
	"github.com/skiffcd/skiff/internal/testwait"
)

// TestSeedsSlackSetup replays the seeds: legacy config.yaml enabling
// on-sync-succeeded and on-health-degraded, the token in notifiers.yaml and
// the legacy recipients annotation naming a Slack channel.
func TestSeedsSlackSetup(t *testing.T) {
	ns := cluster.Namespace(t)
	c, _ := startController(t, ns)
	slack := startFakeSlack(t)
	applyConfig(t, c, ns, readData(t, "seeds-cm.yaml", nil), readData(t, "seeds-secret.yaml", map[string]string{"SLACK_API": slack.URL}))
	app := createApp(t, c, ns, "guestbook", map[string]string{
		"recipients.argocd-notifications.argoproj.io": "slack:test-argocd-notification",
	})
	start := time.Date(2026, 1, 1, 10, 0, 0, 0, time.UTC)

	updateApp(t, c, app, synced("1111111", start, v1alpha1.HealthStatusHealthy))
	testwait.Eventually(t, "the first sync message", func() bool { return len(slack.matching("synced")) == 1 })
	first := slack.matching("synced")[0]
	if first.Channel != "test-argocd-notification" || !strings.Contains(first.Text, "1111111") || first.Authorization != "Bearer xoxb-seeds-token" {
		t.Errorf("first message = %+v", first)
	}

	// Repeated updates of the same state send nothing more.
	for i := range 3 {
		updateApp(t, c, app, func(a *v1alpha1.Application) { a.Labels = map[string]string{"touch": string(rune('a' + i))} })
	}
	updateApp(t, c, app, synced("2222222", start.Add(time.Minute), v1alpha1.HealthStatusHealthy))
	testwait.Eventually(t, "the second sync message", func() bool { return len(slack.matching("2222222")) == 1 })

	updateApp(t, c, app, func(a *v1alpha1.Application) {
		a.Status.Health = v1alpha1.HealthStatus{Status: v1alpha1.HealthStatusDegraded, Message: "Back-off restarting failed container"}
	})
	testwait.Eventually(t, "the degraded message", func() bool { return len(slack.matching("degraded")) == 1 })
	updateApp(t, c, app, func(a *v1alpha1.Application) { a.Labels = map[string]string{"touch": "again"} })

	// A third sync is processed after every update above, so the counts
	// below are final.
	updateApp(t, c, app, synced("3333333", start.Add(2*time.Minute), v1alpha1.HealthStatusDegraded))
	testwait.Eventually(t, "the third sync message", func() bool { return len(slack.matching("3333333")) == 1 })
	if n := len(slack.matching("synced")); n != 3 {
		t.Errorf("%d sync messages, want 3 (one per sync)", n)
	}
	if n := len(slack.matching("degraded")); n != 1 {
		t.Errorf("%d degraded messages, want 1", n)
	}
}
