package service

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	"github.com/skiffcd/skiff/internal/notify"
)

type webhookSettings struct {
	URL     string `json:"url"`
	Headers []struct {
		Name  string `json:"name"`
		Value string `json:"value"`
	} `json:"headers,omitempty"`
	BasicAuth *struct {
		Username string `json:"username"`
		Password string `json:"password"`
	} `json:"basicAuth,omitempty"`
	InsecureSkipVerify bool `json:"insecureSkipVerify,omitempty"`
}

// webhook calls any HTTP endpoint with the request its template's
// webhook.<service name> entry describes; templates without one send nothing.
type webhook struct {
	name     string
	settings webhookSettings
	client   *http.Client
}

func newWebhook(cfg notify.ServiceConfig) (*webhook, error) {
	var s webhookSettings
	if err := decode(cfg.Settings, &s); err != nil {
		return nil, err
	}
	if s.URL == "" {
		return nil, fmt.Errorf("url is required")
	}
	return &webhook{name: cfg.Name, settings: s, client: httpClient(s.InsecureSkipVerify)}, nil
}

func (w *webhook) Send(ctx context.Context, n notify.Notification, _ string) error {
	tmpl, ok := n.Webhook[w.name]
	if !ok {
		return nil
	}
	method := tmpl.Method
	if method == "" {
		method = http.MethodGet
	}
	url := strings.TrimSuffix(w.settings.URL, "/") + tmpl.Path
	if tmpl.Path == "" {
		url = w.settings.URL
	}
	req, err := http.NewRequestWithContext(ctx, method, url, strings.NewReader(tmpl.Body))
	if err != nil {
		return fmt.Errorf("building the request: invalid method or URL")
	}
	for _, h := range w.settings.Headers {
		req.Header.Add(h.Name, h.Value)
	}
	if a := w.settings.BasicAuth; a != nil {
		req.SetBasicAuth(a.Username, a.Password)
	}
	_, err = do(w.client, req)
	return err
}
