package notification

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/skiffcd/skiff/api/v1alpha1"
	"github.com/skiffcd/skiff/internal/testwait"
)

// TestFailedDeliveryIsAnEventWithoutSecrets: Slack refuses every message and
// echoes the token back; the failure becomes an Event and a metric, and the
// token appears in neither.
func TestFailedDeliveryIsAnEventWithoutSecrets(t *testing.T) {
	ns := cluster.Namespace(t)
	c, _ := startController(t, ns)
	refusing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "refused, you sent "+r.Header.Get("Authorization"), http.StatusInternalServerError)
	}))
	t.Cleanup(refusing.Close)
	const token = "xoxb-must-stay-hidden"
	applyConfig(t, c, ns, map[string]string{"service.slack": "token: $slack-token\napiURL: " + refusing.URL},
		map[string]string{"slack-token": token})
	failedBefore := failedDeliveries(t)
	app := createApp(t, c, ns, "refused", map[string]string{"notifications.argoproj.io/subscribe.on-sync-succeeded.slack": "deploys"})
	updateApp(t, c, app, synced("r1", time.Now(), v1alpha1.HealthStatusHealthy))

	testwait.Eventually(t, "the failure Event", func() bool { return len(eventsAbout(t, c, ns, "refused", eventReasonFailed)) > 0 })
	for _, e := range eventsAbout(t, c, ns, "refused", eventReasonFailed) {
		if strings.Contains(e.Message, token) || !strings.Contains(e.Message, "status 500") {
			t.Errorf("event message = %q, want the status and no token", e.Message)
		}
	}
	if got := failedDeliveries(t); got <= failedBefore {
		t.Errorf("failed deliveries metric = %v, want more than %v", got, failedBefore)
	}
}

func failedDeliveries(t *testing.T) float64 {
	t.Helper()
	var m dto.Metric
	if err := deliveries.WithLabelValues("on-sync-succeeded", "slack", "false").Write(&m); err != nil {
		t.Fatal(err)
	}
	return m.GetCounter().GetValue()
}
