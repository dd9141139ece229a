package service

import (
	"context"
	"fmt"
	"net/http"

	"github.com/skiffcd/skiff/internal/notify"
)

// urlPerRecipient posts to the webhook URL a recipient name maps to, as the
// teams (recipientUrls) and googlechat (webhooks) services are configured.
type urlPerRecipient struct {
	urls    map[string]string
	payload func(notify.Notification) any
	client  *http.Client
}

func newURLPerRecipient(cfg notify.ServiceConfig, field string, payload func(notify.Notification) any) (*urlPerRecipient, error) {
	var s map[string]map[string]string
	if err := decode(map[string]any{field: cfg.Settings[field]}, &s); err != nil {
		return nil, err
	}
	if len(s[field]) == 0 {
		return nil, fmt.Errorf("%s is required", field)
	}
	return &urlPerRecipient{urls: s[field], payload: payload, client: httpClient(false)}, nil
}

func (u *urlPerRecipient) Send(ctx context.Context, n notify.Notification, recipient string) error {
	url, ok := u.urls[recipient]
	if !ok {
		return fmt.Errorf("no webhook URL for recipient %q", recipient)
	}
	_, err := postJSON(ctx, u.client, url, u.payload(n), nil)
	return err
}

func teamsPayload(n notify.Notification) any {
	return map[string]any{"@type": "MessageCard", "@context": "https://schema.org/extensions", "title": n.Title, "text": n.Message}
}

func googleChatPayload(n notify.Notification) any {
	return map[string]any{"text": n.Message}
}
