// Package service delivers rendered notifications: webhook, Slack (token API
// and incoming webhooks), email over SMTP, Microsoft Teams and Google Chat
// webhooks. Each Send is bounded by a timeout and retried with back-off by
// Deliver; callers mask Secret values in the errors returned.
package service

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	neturl "net/url"
	"time"

	"github.com/skiffcd/skiff/internal/notify"
)

// Sender sends one notification to one recipient of a service.
type Sender interface {
	Send(ctx context.Context, n notify.Notification, recipient string) error
}

// New builds the sender of a configured service.
func New(cfg notify.ServiceConfig) (Sender, error) {
	var s Sender
	var err error
	switch cfg.Type {
	case "webhook":
		s, err = newWebhook(cfg)
	case "slack":
		s, err = newSlack(cfg)
	case "email":
		s, err = newEmail(cfg)
	case "teams":
		s, err = newURLPerRecipient(cfg, "recipientUrls", teamsPayload)
	case "googlechat":
		s, err = newURLPerRecipient(cfg, "webhooks", googleChatPayload)
	default:
		return nil, fmt.Errorf("service %s: unsupported type %q", cfg.Name, cfg.Type)
	}
	if err != nil {
		return nil, fmt.Errorf("service %s: %w", cfg.Name, err)
	}
	return s, nil
}

// Retry bounds delivery attempts.
type Retry struct {
	// Attempts is the number of tries (default 3).
	Attempts int
	// Backoff is the wait after the first failure, doubled after each (default 1 s).
	Backoff time.Duration
	// Timeout bounds each attempt (default 10 s).
	Timeout time.Duration
}

// Deliver sends n, retrying failures with exponential back-off.
func Deliver(ctx context.Context, s Sender, n notify.Notification, recipient string, r Retry) error {
	if r.Attempts <= 0 {
		r.Attempts = 3
	}
	if r.Backoff <= 0 {
		r.Backoff = time.Second
	}
	if r.Timeout <= 0 {
		r.Timeout = 10 * time.Second
	}
	var err error
	wait := r.Backoff
	for attempt := 1; ; attempt++ {
		attemptCtx, cancel := context.WithTimeout(ctx, r.Timeout)
		err = s.Send(attemptCtx, n, recipient)
		cancel()
		if err == nil || attempt == r.Attempts {
			break
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w (giving up: %w)", err, ctx.Err())
		case <-time.After(wait):
		}
		wait *= 2
	}
	if err != nil {
		return fmt.Errorf("after %d attempts: %w", r.Attempts, err)
	}
	return nil
}

// decode converts a service's settings into a typed struct.
func decode(settings map[string]any, into any) error {
	data, err := json.Marshal(settings)
	if err != nil {
		return err
	}
	return json.Unmarshal(data, into)
}

func httpClient(insecure bool) *http.Client {
	transport := http.DefaultTransport.(*http.Transport).Clone()
	if insecure {
		transport.TLSClientConfig = &tls.Config{InsecureSkipVerify: true} //nolint:gosec // opted into by the user's service setting
	}
	return &http.Client{Transport: transport}
}

// do sends a request and fails on a non-2xx status, quoting a bounded part
// of the response body. It never quotes the URL, which may hold a token.
func do(client *http.Client, req *http.Request) ([]byte, error) {
	resp, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%s request failed: %w", req.Method, unwrapURLError(err))
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return nil, fmt.Errorf("reading the response: %w", err)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, fmt.Errorf("status %d: %s", resp.StatusCode, truncate(string(body), 200))
	}
	return body, nil
}

func postJSON(ctx context.Context, client *http.Client, url string, payload any, header http.Header) ([]byte, error) {
	data, err := json.Marshal(payload)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("building the request: invalid URL")
	}
	req.Header.Set("Content-Type", "application/json")
	for k, v := range header {
		req.Header[k] = v
	}
	return do(client, req)
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// unwrapURLError drops the URL from a client error: it may hold a token.
func unwrapURLError(err error) error {
	var urlErr *neturl.Error
	if errors.As(err, &urlErr) {
		return urlErr.Err
	}
	return err
}
