package service

import (
	"context"
	"net"
	"strings"
	"testing"

	"github.com/skiffcd/skiff/internal/notify"
	"github.com/skiffcd/skiff/internal/notify/smtptest"
)

func TestEmail(t *testing.T) {
	tests := map[string]struct {
		notification notify.Notification
		wantSubject  string
	}{
		"the email subject field is the subject": {
			notification: notify.Notification{Title: "title", Message: "body", Email: &notify.EmailTemplate{Subject: "synced"}},
			wantSubject:  "Subject: synced",
		},
		"without an email subject the title is the subject": {
			notification: notify.Notification{Title: "title", Message: "body"},
			wantSubject:  "Subject: title",
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			srv := smtptest.Start(t)
			host, port, _ := net.SplitHostPort(srv.Addr)
			s, err := New(notify.ServiceConfig{Type: "email", Name: "email", Settings: map[string]any{
				"host": host, "port": port, "from": "skiff@example.com", "username": "u", "password": "p",
			}})
			if err != nil {
				t.Fatal(err)
			}
			if err := s.Send(context.Background(), tt.notification, "ops@example.com"); err != nil {
				t.Fatal(err)
			}
			msgs := srv.Messages()
			if len(msgs) != 1 || msgs[0].To[0] != "ops@example.com" || !strings.Contains(msgs[0].Data, tt.wantSubject) || !strings.Contains(msgs[0].Data, "body") {
				t.Errorf("messages = %+v", msgs)
			}
		})
	}
}
