package notification

import (
	"strings"
	"testing"
	"time"

	"github.com/skiffcd/skiff/api/v1alpha1"
	"github.com/skiffcd/skiff/internal/notify"
	"github.com/skiffcd/skiff/internal/testwait"
)

// TestBrokenTemplate: a template that fails to render yields one Event on
// the app, one that fails to parse an Event on the ConfigMap, and the other
// triggers keep sending.
func TestBrokenTemplate(t *testing.T) {
	ns := cluster.Namespace(t)
	c, _ := startController(t, ns)
	slack := startFakeSlack(t)
	applyConfig(t, c, ns, map[string]string{
		"service.slack":       "token: $slack-token\napiURL: " + slack.URL,
		"template.fails":      `message: "{{fail \"the ops team broke this\"}}"`,
		"trigger.on-always":   "- when: 'true'\n  send: [fails]",
		"template.unparsable": `message: "{{.app.metadata.name"`,
	}, map[string]string{"slack-token": "xoxb-broken"})
	app := createApp(t, c, ns, "brittle", map[string]string{
		"notifications.argoproj.io/subscribe.on-always.slack":         "deploys",
		"notifications.argoproj.io/subscribe.on-sync-succeeded.slack": "deploys",
	})
	start := time.Now()
	updateApp(t, c, app, synced("r1", start, v1alpha1.HealthStatusHealthy))
	testwait.Eventually(t, "the sync message", func() bool { return len(slack.matching("r1")) == 1 })
	testwait.Eventually(t, "the template Event", func() bool { return len(eventsAbout(t, c, ns, "brittle", eventReasonTemplateFail)) > 0 })
	updateApp(t, c, app, synced("r2", start.Add(time.Minute), v1alpha1.HealthStatusHealthy))
	testwait.Eventually(t, "the second sync message", func() bool { return len(slack.matching("r2")) == 1 })

	got := eventsAbout(t, c, ns, "brittle", eventReasonTemplateFail)
	if len(got) != 1 || !strings.Contains(got[0].Message, "the ops team broke this") {
		t.Errorf("template Events = %+v, want one naming the failure", got)
	}
	testwait.Eventually(t, "the ConfigMap Event", func() bool {
		for _, e := range eventsAbout(t, c, ns, notify.ConfigMapName, eventReasonConfigError) {
			if strings.Contains(e.Message, "template.unparsable") {
				return true
			}
		}
		return false
	})
}
