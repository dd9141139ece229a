package provider

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/skiffcd/skiff/api/v1alpha1"
)

// hangingServer answers only when the test ends.
func hangingServer(t *testing.T) string {
	t.Helper()
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(func() { close(release); srv.Close() })
	return srv.URL
}

func TestWeb(t *testing.T) {
	var gotMethod, gotBody, gotHeader, gotContentType string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		gotMethod, gotBody, gotHeader, gotContentType = r.Method, string(body), r.Header.Get("X-Token"), r.Header.Get("Content-Type")
		switch r.URL.Path {
		case "/ok":
			_, _ = io.WriteString(w, `{"data":{"ok":true,"rate":0.02,"name":"web","items":[1,2,3]}}`)
		case "/text":
			_, _ = io.WriteString(w, `not json`)
		case "/down":
			http.Error(w, "down", http.StatusServiceUnavailable)
		}
	}))
	t.Cleanup(srv.Close)
	tlsSrv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = io.WriteString(w, `{"ok":true}`)
	}))
	t.Cleanup(tlsSrv.Close)

	web := func(cfg v1alpha1.WebMetric, success string) v1alpha1.Metric {
		return v1alpha1.Metric{Name: "m", SuccessCondition: success, Provider: v1alpha1.MetricProvider{Web: &cfg}}
	}
	tests := map[string]struct {
		metric                    v1alpha1.Metric
		wantPhase                 v1alpha1.AnalysisPhase
		wantValue, wantMessage    string
		wantMethod, wantBody      string
		wantHeader, wantMediaType string
	}{
		"a boolean selected by jsonPath passes": {
			metric:    web(v1alpha1.WebMetric{URL: srv.URL + "/ok", JSONPath: "{$.data.ok}"}, "result == true"),
			wantPhase: v1alpha1.AnalysisPhaseSuccessful, wantValue: "true", wantMethod: "GET",
		},
		"a number selected by jsonPath is compared as a number": {
			metric:    web(v1alpha1.WebMetric{URL: srv.URL + "/ok", JSONPath: "{$.data.rate}"}, "result < 0.01"),
			wantPhase: v1alpha1.AnalysisPhaseFailed, wantValue: "0.02",
		},
		"a string keeps its text": {
			metric:    web(v1alpha1.WebMetric{URL: srv.URL + "/ok", JSONPath: "{$.data.name}"}, `result == "web"`),
			wantPhase: v1alpha1.AnalysisPhaseSuccessful, wantValue: "web",
		},
		"an array is shown as JSON and can be measured": {
			metric:    web(v1alpha1.WebMetric{URL: srv.URL + "/ok", JSONPath: "{$.data.items}"}, "len(result) == 3"),
			wantPhase: v1alpha1.AnalysisPhaseSuccessful, wantValue: "[1,2,3]",
		},
		"without jsonPath the whole document is the result": {
			metric:    web(v1alpha1.WebMetric{URL: srv.URL + "/ok"}, "result.data.ok"),
			wantPhase: v1alpha1.AnalysisPhaseSuccessful,
		},
		"method, headers and body are sent": {
			metric: web(v1alpha1.WebMetric{URL: srv.URL + "/ok", Method: "POST", Body: `{"q":1}`, JSONPath: "{$.data.ok}",
				Headers: []v1alpha1.WebMetricHeader{{Key: "X-Token", Value: "abc"}}}, "result"),
			wantPhase: v1alpha1.AnalysisPhaseSuccessful, wantMethod: "POST", wantBody: `{"q":1}`, wantHeader: "abc",
		},
		"a jsonBody is sent as JSON": {
			metric:    web(v1alpha1.WebMetric{URL: srv.URL + "/ok", Method: "PUT", JSONBody: &runtime.RawExtension{Raw: []byte(`{"a":"b"}`)}, JSONPath: "{$.data.ok}"}, "result"),
			wantPhase: v1alpha1.AnalysisPhaseSuccessful, wantMethod: "PUT", wantBody: `{"a":"b"}`, wantMediaType: "application/json",
		},
		"a path that selects nothing is an error": {
			metric:    web(v1alpha1.WebMetric{URL: srv.URL + "/ok", JSONPath: "{$.data.missing}"}, "result"),
			wantPhase: v1alpha1.AnalysisPhaseError, wantMessage: "jsonPath",
		},
		"a jsonPath that does not parse is an error": {
			metric:    web(v1alpha1.WebMetric{URL: srv.URL + "/ok", JSONPath: "{$.data["}, "result"),
			wantPhase: v1alpha1.AnalysisPhaseError, wantMessage: "invalid jsonPath",
		},
		"a body that is not JSON is an error": {
			metric:    web(v1alpha1.WebMetric{URL: srv.URL + "/text", JSONPath: "{$.x}"}, "result"),
			wantPhase: v1alpha1.AnalysisPhaseError, wantMessage: "not JSON",
		},
		"a non-2xx status is an error": {
			metric:    web(v1alpha1.WebMetric{URL: srv.URL + "/down"}, "result"),
			wantPhase: v1alpha1.AnalysisPhaseError, wantMessage: "received non 2xx response code: 503",
		},
		"an unreachable URL is an error": {
			metric:    web(v1alpha1.WebMetric{URL: "http://127.0.0.1:1/x"}, "result"),
			wantPhase: v1alpha1.AnalysisPhaseError, wantMessage: "connection refused",
		},
		"a URL that does not parse is an error": {
			metric:    web(v1alpha1.WebMetric{URL: "http://[::1/x"}, "result"),
			wantPhase: v1alpha1.AnalysisPhaseError, wantMessage: "invalid request",
		},
		"a self-signed certificate is refused": {
			metric:    web(v1alpha1.WebMetric{URL: tlsSrv.URL, JSONPath: "{$.ok}"}, "result"),
			wantPhase: v1alpha1.AnalysisPhaseError, wantMessage: "certificate",
		},
		"insecure accepts a self-signed certificate": {
			metric:    web(v1alpha1.WebMetric{URL: tlsSrv.URL, JSONPath: "{$.ok}", Insecure: true}, "result"),
			wantPhase: v1alpha1.AnalysisPhaseSuccessful,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			gotMethod, gotBody, gotHeader, gotContentType = "", "", "", ""
			m := (&Web{Now: time.Now}).Run(context.Background(), &v1alpha1.AnalysisRun{}, tc.metric)
			if m.Phase != tc.wantPhase {
				t.Errorf("phase = %s (%s), want %s", m.Phase, m.Message, tc.wantPhase)
			}
			if tc.wantValue != "" && m.Value != tc.wantValue {
				t.Errorf("value = %q, want %q", m.Value, tc.wantValue)
			}
			if !strings.Contains(m.Message, tc.wantMessage) {
				t.Errorf("message = %q, want it to contain %q", m.Message, tc.wantMessage)
			}
			for _, c := range []struct{ name, got, want string }{
				{"method", gotMethod, tc.wantMethod}, {"body", gotBody, tc.wantBody},
				{"header", gotHeader, tc.wantHeader}, {"content type", gotContentType, tc.wantMediaType},
			} {
				if c.want != "" && c.got != c.want {
					t.Errorf("%s = %q, want %q", c.name, c.got, c.want)
				}
			}
		})
	}
}

// A server that never answers is cut off by timeoutSeconds.
func TestWebTimeout(t *testing.T) {
	url := hangingServer(t)
	start := time.Now()
	m := (&Web{Now: time.Now}).Run(context.Background(), &v1alpha1.AnalysisRun{},
		v1alpha1.Metric{Name: "m", Provider: v1alpha1.MetricProvider{Web: &v1alpha1.WebMetric{URL: url, TimeoutSeconds: 1}}})
	if m.Phase != v1alpha1.AnalysisPhaseError || !strings.Contains(m.Message, "deadline exceeded") {
		t.Errorf("got %s %q, want an Error for the timeout", m.Phase, m.Message)
	}
	if elapsed := time.Since(start); elapsed > 10*time.Second {
		t.Errorf("took %s despite a 1 s timeout", elapsed)
	}
}

func TestFactory(t *testing.T) {
	f := &Factory{}
	if _, err := f.For(v1alpha1.Metric{Name: "m", Provider: v1alpha1.MetricProvider{Plugin: map[string]runtime.RawExtension{"x": {}}}}); err == nil || !strings.Contains(err.Error(), "plugin") {
		t.Errorf("a plugin provider gave %v, want an error naming plugins", err)
	}
	if _, err := f.For(v1alpha1.Metric{Name: "m"}); err == nil || !strings.Contains(err.Error(), "no supported provider") {
		t.Errorf("a metric without provider gave %v", err)
	}
}
