package service

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/skiffcd/skiff/internal/notify"
)

func TestWebhook(t *testing.T) {
	type request struct{ method, path, body, header, user, password string }
	tests := map[string]struct {
		notification notify.Notification
		want         *request
	}{
		"the template's method, path and body are sent with headers and basic auth": {
			notification: notify.Notification{Webhook: map[string]notify.WebhookTemplate{
				"receiver": {Method: "POST", Path: "/apps/guestbook", Body: `{"ok": true}`},
			}},
			want: &request{method: "POST", path: "/base/apps/guestbook", body: `{"ok": true}`, header: "yes", user: "u", password: "p"},
		},
		"a template without an entry for this webhook sends nothing": {
			notification: notify.Notification{Message: "only text"},
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			var got *request
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				body, _ := io.ReadAll(r.Body)
				user, password, _ := r.BasicAuth()
				got = &request{r.Method, r.URL.Path, string(body), r.Header.Get("X-Test"), user, password}
			}))
			defer srv.Close()
			s, err := New(notify.ServiceConfig{Type: "webhook", Name: "receiver", Settings: map[string]any{
				"url":       srv.URL + "/base",
				"headers":   []any{map[string]any{"name": "X-Test", "value": "yes"}},
				"basicAuth": map[string]any{"username": "u", "password": "p"},
			}})
			if err != nil {
				t.Fatal(err)
			}
			if err := s.Send(context.Background(), tt.notification, ""); err != nil {
				t.Fatal(err)
			}
			if (got == nil) != (tt.want == nil) || (got != nil && *got != *tt.want) {
				t.Errorf("request = %+v, want %+v", got, tt.want)
			}
		})
	}
}
