package service

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/skiffcd/skiff/internal/notify"
)

const defaultSlackAPI = "https://slack.com/api/"

type slackSettings struct {
	Token string `json:"token,omitempty"`
	// APIURL replaces https://slack.com/api/ (Slack-compatible servers, tests).
	APIURL   string `json:"apiURL,omitempty"`
	Username string `json:"username,omitempty"`
	Icon     string `json:"icon,omitempty"`
	// WebhookURL sends through an incoming webhook instead of the token API;
	// the recipient (channel) is then fixed by the webhook.
	WebhookURL         string `json:"webhookURL,omitempty"`
	InsecureSkipVerify bool   `json:"insecureSkipVerify,omitempty"`
}

type slack struct {
	settings slackSettings
	client   *http.Client
}

func newSlack(cfg notify.ServiceConfig) (*slack, error) {
	var s slackSettings
	if err := decode(cfg.Settings, &s); err != nil {
		return nil, err
	}
	if s.Token == "" && s.WebhookURL == "" {
		return nil, fmt.Errorf("token or webhookURL is required")
	}
	if s.APIURL == "" {
		s.APIURL = defaultSlackAPI
	}
	return &slack{settings: s, client: httpClient(s.InsecureSkipVerify)}, nil
}

func (s *slack) Send(ctx context.Context, n notify.Notification, channel string) error {
	msg := map[string]any{"text": n.Message}
	if s.settings.Username != "" {
		msg["username"] = s.settings.Username
	}
	if icon := s.settings.Icon; icon != "" {
		if _, err := url.ParseRequestURI(icon); err == nil {
			msg["icon_url"] = icon
		} else {
			msg["icon_emoji"] = icon
		}
	}
	if n.Slack != nil {
		for field, text := range map[string]string{"attachments": n.Slack.Attachments, "blocks": n.Slack.Blocks} {
			if strings.TrimSpace(text) == "" {
				continue
			}
			var v any
			if err := json.Unmarshal([]byte(text), &v); err != nil {
				return fmt.Errorf("slack %s are not valid JSON: %w", field, err)
			}
			msg[field] = v
		}
	}
	if s.settings.WebhookURL != "" {
		_, err := postJSON(ctx, s.client, s.settings.WebhookURL, msg, nil)
		return err
	}
	msg["channel"] = channel
	body, err := postJSON(ctx, s.client, strings.TrimSuffix(s.settings.APIURL, "/")+"/chat.postMessage", msg,
		http.Header{"Authorization": {"Bearer " + s.settings.Token}})
	if err != nil {
		return err
	}
	var resp struct {
		OK    bool   `json:"ok"`
		Error string `json:"error"`
	}
	if err := json.Unmarshal(body, &resp); err != nil {
		return fmt.Errorf("slack answered with something other than JSON: %s", truncate(string(body), 200))
	}
	if !resp.OK {
		return fmt.Errorf("slack refused the message: %s", resp.Error)
	}
	return nil
}
