package service

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/skiffcd/skiff/internal/notify"
)

func TestSlack(t *testing.T) {
	tests := map[string]struct {
		answer   string
		wantErr  string
		useHook  bool
		wantPath string
		wantChan string
	}{
		"the token API receives the channel, text and attachments": {
			answer: `{"ok": true}`, wantPath: "/api/chat.postMessage", wantChan: "deploys",
		},
		"a refusal by Slack is an error naming Slack's reason": {
			answer: `{"ok": false, "error": "channel_not_found"}`, wantPath: "/api/chat.postMessage", wantChan: "deploys",
			wantErr: "channel_not_found",
		},
		"an incoming webhook receives the message without a channel": {
			answer: "ok", useHook: true, wantPath: "/hook",
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			var got map[string]any
			var gotPath, gotAuth string
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				gotPath, gotAuth = r.URL.Path, r.Header.Get("Authorization")
				_ = json.NewDecoder(r.Body).Decode(&got)
				_, _ = w.Write([]byte(tt.answer))
			}))
			defer srv.Close()
			settings := map[string]any{"token": "xoxb-1", "apiURL": srv.URL + "/api"}
			if tt.useHook {
				settings = map[string]any{"webhookURL": srv.URL + "/hook"}
			}
			s, err := New(notify.ServiceConfig{Type: "slack", Name: "slack", Settings: settings})
			if err != nil {
				t.Fatal(err)
			}
			err = s.Send(context.Background(), notify.Notification{
				Message: "synced", Slack: &notify.SlackTemplate{Attachments: `[{"title": "guestbook"}]`},
			}, "deploys")
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want it to mention %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if gotPath != tt.wantPath || got["text"] != "synced" || got["attachments"] == nil {
				t.Errorf("path %s, body %v", gotPath, got)
			}
			if ch, _ := got["channel"].(string); ch != tt.wantChan {
				t.Errorf("channel = %q, want %q", ch, tt.wantChan)
			}
			if !tt.useHook && gotAuth != "Bearer xoxb-1" {
				t.Errorf("authorization = %q", gotAuth)
			}
		})
	}
}
