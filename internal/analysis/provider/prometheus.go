package provider

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/skiffcd/skiff/api/v1alpha1"
	"github.com/skiffcd/skiff/internal/analysis"
)

const defaultPrometheusTimeout = 30 * time.Second

// Prometheus measures a metric by an instant query through Prometheus'
// HTTP API. A scalar, or a vector of one sample, is a number; a vector of
// several samples is an array of numbers. The value is shown as Argo
// Rollouts shows it: a scalar as its number, a vector as [v1,v2,...].
type Prometheus struct {
	noResume
	Now func() time.Time
}

// Run queries Prometheus and judges the result.
func (p *Prometheus) Run(ctx context.Context, _ *v1alpha1.AnalysisRun, metric v1alpha1.Metric) v1alpha1.Measurement {
	m := started(p.Now())
	value, result, err := p.query(ctx, metric.Provider.Prometheus)
	if err != nil {
		return analysis.Finish(m, v1alpha1.AnalysisPhaseError, err.Error(), p.Now())
	}
	return judge(m, metric, value, result, p.Now())
}

type promResponse struct {
	Status    string `json:"status"`
	ErrorType string `json:"errorType"`
	Error     string `json:"error"`
	Data      struct {
		ResultType string          `json:"resultType"`
		Result     json.RawMessage `json:"result"`
	} `json:"data"`
}

func (p *Prometheus) query(ctx context.Context, cfg *v1alpha1.PrometheusMetric) (string, any, error) {
	if cfg.Address == "" {
		return "", nil, fmt.Errorf("prometheus metric: address is required")
	}
	if cfg.Query == "" {
		return "", nil, fmt.Errorf("prometheus metric: query is required")
	}
	base, err := url.Parse(cfg.Address)
	if err != nil || base.Scheme == "" || base.Host == "" {
		return "", nil, fmt.Errorf("prometheus metric: invalid address %q", cfg.Address)
	}
	timeout := defaultPrometheusTimeout
	if cfg.Timeout != nil && *cfg.Timeout > 0 {
		timeout = time.Duration(*cfg.Timeout) * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	endpoint := base.JoinPath("api", "v1", "query")
	form := url.Values{"query": {cfg.Query}, "timeout": {timeout.String()}}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint.String(), strings.NewReader(form.Encode()))
	if err != nil {
		return "", nil, fmt.Errorf("prometheus metric: %w", err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	for _, h := range cfg.Headers {
		req.Header.Set(h.Key, h.Value)
	}
	resp, err := httpClient(cfg.Insecure).Do(req)
	if err != nil {
		return "", nil, fmt.Errorf("prometheus metric: %w", err)
	}
	defer func() { _ = resp.Body.Close() }()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxBody))
	if err != nil {
		return "", nil, fmt.Errorf("prometheus metric: reading the response: %w", err)
	}
	var body promResponse
	if err := json.Unmarshal(data, &body); err != nil {
		return "", nil, fmt.Errorf("prometheus metric: HTTP %d with a body that is not the query API's JSON", resp.StatusCode)
	}
	if body.Status != "success" {
		return "", nil, fmt.Errorf("prometheus metric: query failed (%s): %s", body.ErrorType, body.Error)
	}
	return promResult(body.Data.ResultType, body.Data.Result)
}

// promResult turns a query result into the value text and the condition's
// `result`.
func promResult(resultType string, raw json.RawMessage) (string, any, error) {
	switch resultType {
	case "scalar":
		var sample [2]any
		if err := json.Unmarshal(raw, &sample); err != nil {
			return "", nil, fmt.Errorf("prometheus metric: decoding the scalar: %w", err)
		}
		f, err := sampleValue(sample[1])
		if err != nil {
			return "", nil, err
		}
		return formatFloat(f), f, nil
	case "vector":
		var samples []struct {
			Value [2]any `json:"value"`
		}
		if err := json.Unmarshal(raw, &samples); err != nil {
			return "", nil, fmt.Errorf("prometheus metric: decoding the vector: %w", err)
		}
		values := make([]float64, len(samples))
		texts := make([]string, len(samples))
		for i, s := range samples {
			f, err := sampleValue(s.Value[1])
			if err != nil {
				return "", nil, err
			}
			values[i], texts[i] = f, formatFloat(f)
		}
		// Always an array, as in Argo Rollouts: conditions index it
		// (result[0] < 0.05), and an empty vector is an empty array.
		return "[" + strings.Join(texts, ",") + "]", values, nil
	}
	return "", nil, fmt.Errorf("prometheus metric: result type %q is not supported (use a scalar or instant vector query)", resultType)
}

func sampleValue(v any) (float64, error) {
	s, ok := v.(string)
	if !ok {
		return 0, fmt.Errorf("prometheus metric: sample value %v is not a string", v)
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, fmt.Errorf("prometheus metric: sample value %q: %w", s, err)
	}
	return f, nil
}

func formatFloat(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }
