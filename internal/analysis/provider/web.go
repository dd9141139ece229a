package provider

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"k8s.io/client-go/util/jsonpath"

	"github.com/skiffcd/skiff/api/v1alpha1"
	"github.com/skiffcd/skiff/internal/analysis"
)

const (
	defaultWebTimeout = 10 * time.Second
	maxBody           = 10 << 20
)

// Web measures a metric by an HTTP request whose JSON response is read
// through jsonPath.
type Web struct {
	noResume
	Now func() time.Time
}

// Run makes the request and judges the selected value.
func (w *Web) Run(ctx context.Context, _ *v1alpha1.AnalysisRun, metric v1alpha1.Metric) v1alpha1.Measurement {
	m := started(w.Now())
	value, result, err := w.fetch(ctx, metric.Provider.Web)
	if err != nil {
		return analysis.Finish(m, v1alpha1.AnalysisPhaseError, err.Error(), w.Now())
	}
	return judge(m, metric, value, result, w.Now())
}

func (w *Web) fetch(ctx context.Context, cfg *v1alpha1.WebMetric) (string, any, error) {
	timeout := defaultWebTimeout
	if cfg.TimeoutSeconds > 0 {
		timeout = time.Duration(cfg.TimeoutSeconds) * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	method := cfg.Method
	if method == "" {
		method = http.MethodGet
	}
	var body io.Reader
	switch {
	case cfg.Body != "" && cfg.JSONBody != nil:
		return "", nil, fmt.Errorf("web metric: body and jsonBody are mutually exclusive")
	case cfg.Body != "":
		body = strings.NewReader(cfg.Body)
	case cfg.JSONBody != nil:
		body = bytes.NewReader(cfg.JSONBody.Raw)
	}
	req, err := http.NewRequestWithContext(ctx, method, cfg.URL, body)
	if err != nil {
		return "", nil, fmt.Errorf("web metric: invalid request: %w", err)
	}
	if cfg.JSONBody != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for _, h := range cfg.Headers {
		req.Header.Set(h.Key, h.Value)
	}
	resp, err := httpClient(cfg.Insecure).Do(req)
	if err != nil {
		return "", nil, fmt.Errorf("web metric: %w", err)
	}
	defer func() { _ = resp.Body.Close() }()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxBody))
	if err != nil {
		return "", nil, fmt.Errorf("web metric: reading the response: %w", err)
	}
	if resp.StatusCode < 200 || resp.StatusCode >= 300 {
		return "", nil, fmt.Errorf("web metric: received non 2xx response code: %d", resp.StatusCode)
	}
	return selectJSON(data, cfg.JSONPath)
}

// selectJSON reads the value at path ({$} when empty) from a JSON document.
// The value's text is a string as is, anything else as JSON.
func selectJSON(data []byte, path string) (string, any, error) {
	var doc any
	if err := json.Unmarshal(data, &doc); err != nil {
		return "", nil, fmt.Errorf("web metric: the response is not JSON: %w", err)
	}
	if path == "" {
		path = "{$}"
	}
	jp := jsonpath.New("metric")
	if err := jp.Parse(path); err != nil {
		return "", nil, fmt.Errorf("web metric: invalid jsonPath %q: %w", path, err)
	}
	found, err := jp.FindResults(doc)
	if err != nil {
		return "", nil, fmt.Errorf("web metric: jsonPath %q: %w", path, err)
	}
	if len(found) == 0 || len(found[0]) == 0 {
		return "", nil, fmt.Errorf("web metric: jsonPath %q selected nothing", path)
	}
	result := found[0][0].Interface()
	if s, ok := result.(string); ok {
		return s, result, nil
	}
	text, err := json.Marshal(result)
	if err != nil {
		return "", nil, fmt.Errorf("web metric: encoding the value: %w", err)
	}
	return string(text), result, nil
}

func httpClient(insecure bool) *http.Client {
	transport := http.DefaultTransport.(*http.Transport).Clone()
	if insecure {
		transport.TLSClientConfig = &tls.Config{InsecureSkipVerify: true} //nolint:gosec // the metric asked for it
	}
	return &http.Client{Transport: transport}
}
