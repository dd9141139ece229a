package notification

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/skiffcd/skiff/api/v1alpha1"
	"github.com/skiffcd/skiff/internal/notify/smtptest"
	"github.com/skiffcd/skiff/internal/testwait"
)

// TestWebhookAndEmail subscribes one app to a webhook receiver and an email
// address; both get the rendered template of one sync.
func TestWebhookAndEmail(t *testing.T) {
	ns := cluster.Namespace(t)
	c, _ := startController(t, ns)
	type request struct{ path, body, token string }
	var mu sync.Mutex
	var requests []request
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		requests = append(requests, request{r.URL.Path, string(body), r.Header.Get("X-Token")})
		mu.Unlock()
	}))
	t.Cleanup(receiver.Close)
	mail := smtptest.Start(t)
	_, smtpPort, _ := net.SplitHostPort(mail.Addr)
	applyConfig(t, c, ns,
		readData(t, "webhook-email-cm.yaml", map[string]string{"WEBHOOK_URL": receiver.URL}),
		map[string]string{"webhook-token": "hook-secret", "smtp-port": smtpPort, "smtp-password": "mail-secret"})
	app := createApp(t, c, ns, "webshop", map[string]string{
		"notifications.argoproj.io/subscribe.on-sync-succeeded.receiver": "",
		"notifications.argoproj.io/subscribe.on-sync-succeeded.email":    "ops@example.com",
	})
	updateApp(t, c, app, synced("abc123", time.Now(), v1alpha1.HealthStatusHealthy))

	testwait.Eventually(t, "the webhook request and the email", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(requests) == 1 && len(mail.Messages()) == 1
	})
	want := request{path: "/apps/webshop", body: `{"app": "webshop", "revision": "abc123"}`, token: "hook-secret"}
	if requests[0] != want {
		t.Errorf("webhook request = %+v, want %+v", requests[0], want)
	}
	msg := mail.Messages()[0]
	if msg.To[0] != "ops@example.com" || !strings.Contains(msg.Data, "Subject: Synced webshop") || !strings.Contains(msg.Data, "webshop synced to abc123") {
		t.Errorf("email = %+v", msg)
	}
}
