package analysis

import (
	"errors"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/skiffcd/skiff/api/v1alpha1"
)

func TestSubstituteMetric(t *testing.T) {
	tests := map[string]struct {
		metric  v1alpha1.Metric
		values  map[string]string
		check   func(v1alpha1.Metric) bool
		wantErr string
	}{
		"a prometheus query gets its args": {
			metric: v1alpha1.Metric{Name: "m", Provider: v1alpha1.MetricProvider{Prometheus: &v1alpha1.PrometheusMetric{Query: `rate(x{svc="{{args.service}}"}[1m])`}}},
			values: map[string]string{"service": "web"},
			check:  func(m v1alpha1.Metric) bool { return m.Provider.Prometheus.Query == `rate(x{svc="web"}[1m])` },
		},
		"spaces inside the braces are allowed": {
			metric: v1alpha1.Metric{Name: "m", Provider: v1alpha1.MetricProvider{Web: &v1alpha1.WebMetric{URL: "http://{{ args.host }}/ok"}}},
			values: map[string]string{"host": "127.0.0.1:80"},
			check:  func(m v1alpha1.Metric) bool { return m.Provider.Web.URL == "http://127.0.0.1:80/ok" },
		},
		"conditions, headers and counts are substituted too": {
			metric: v1alpha1.Metric{Name: "m", SuccessCondition: "result < {{args.max}}",
				Provider: v1alpha1.MetricProvider{Web: &v1alpha1.WebMetric{URL: "http://x", Headers: []v1alpha1.WebMetricHeader{{Key: "Authorization", Value: "Bearer {{args.token}}"}}}}},
			values: map[string]string{"max": "0.5", "token": "s3cret"},
			check: func(m v1alpha1.Metric) bool {
				return m.SuccessCondition == "result < 0.5" && m.Provider.Web.Headers[0].Value == "Bearer s3cret"
			},
		},
		"a value with quotes stays valid JSON": {
			metric: v1alpha1.Metric{Name: "m", Provider: v1alpha1.MetricProvider{Prometheus: &v1alpha1.PrometheusMetric{Query: "{{args.q}}"}}},
			values: map[string]string{"q": `up{job="a"}`},
			check:  func(m v1alpha1.Metric) bool { return m.Provider.Prometheus.Query == `up{job="a"}` },
		},
		"a count and a limit given as args become numbers": {
			metric: v1alpha1.Metric{Name: "m", Interval: "1m",
				Count:        &intstr.IntOrString{Type: intstr.String, StrVal: "{{args.count}}"},
				FailureLimit: &intstr.IntOrString{Type: intstr.String, StrVal: "{{args.limit}}"}},
			values: map[string]string{"count": "2", "limit": "-1"},
			check: func(m v1alpha1.Metric) bool {
				r := v1alpha1.MetricResult{Count: 2, Failed: 2, Measurements: []v1alpha1.Measurement{{Phase: v1alpha1.AnalysisPhaseFailed}}}
				phase, _ := MetricPhase(m, r, false)
				return *EffectiveCount(m) == 2 && phase == v1alpha1.AnalysisPhaseSuccessful
			},
		},
		"an unknown arg is an error": {
			metric:  v1alpha1.Metric{Name: "m", Provider: v1alpha1.MetricProvider{Prometheus: &v1alpha1.PrometheusMetric{Query: "{{args.missing}}"}}},
			wantErr: "failed to resolve {{args.missing}}",
		},
		"other templates are left alone": {
			metric: v1alpha1.Metric{Name: "m", Provider: v1alpha1.MetricProvider{Prometheus: &v1alpha1.PrometheusMetric{Query: "{{templates.x}}"}}},
			check:  func(m v1alpha1.Metric) bool { return m.Provider.Prometheus.Query == "{{templates.x}}" },
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := SubstituteMetric(tc.metric, tc.values)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !tc.check(got) {
				t.Errorf("unexpected metric after substitution: %+v", got)
			}
		})
	}
}

func TestResolveArgs(t *testing.T) {
	secrets := func(name, key string) (string, error) {
		if name == "creds" && key == "token" {
			return "hunter2", nil
		}
		return "", errors.New("not found")
	}
	tests := map[string]struct {
		args        []v1alpha1.Argument
		want        map[string]string
		wantSecrets int
		wantErr     string
	}{
		"a value is taken as written": {
			args: []v1alpha1.Argument{{Name: "a", Value: v1alpha1.NewAnyString("1")}},
			want: map[string]string{"a": "1"},
		},
		"a secretKeyRef is read from the Secret": {
			args: []v1alpha1.Argument{{Name: "t", ValueFrom: &v1alpha1.ValueFrom{SecretKeyRef: &v1alpha1.SecretKeyRef{Name: "creds", Key: "token"}}}},
			want: map[string]string{"t": "hunter2"}, wantSecrets: 1,
		},
		"a missing Secret is an error that names it": {
			args:    []v1alpha1.Argument{{Name: "t", ValueFrom: &v1alpha1.ValueFrom{SecretKeyRef: &v1alpha1.SecretKeyRef{Name: "gone", Key: "token"}}}},
			wantErr: `args.t: reading key "token" of Secret "gone"`,
		},
		"an arg without a value is an error": {
			args:    []v1alpha1.Argument{{Name: "x"}},
			wantErr: "args.x was not resolved",
		},
		"a fieldRef left unresolved is an error": {
			args:    []v1alpha1.Argument{{Name: "x", ValueFrom: &v1alpha1.ValueFrom{FieldRef: &v1alpha1.FieldRef{FieldPath: "metadata.name"}}}},
			wantErr: "fieldRef",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := ResolveArgs(tc.args, secrets)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for k, v := range tc.want {
				if got.Values[k] != v {
					t.Errorf("args.%s = %q, want %q", k, got.Values[k], v)
				}
			}
			if len(got.Secrets) != tc.wantSecrets {
				t.Errorf("secrets = %d, want %d", len(got.Secrets), tc.wantSecrets)
			}
		})
	}
}

func TestMaskHidesSecretValues(t *testing.T) {
	args := ResolvedArgs{Secrets: []string{"hunter2"}}
	if got := args.Mask(`GET http://x?token=hunter2 failed`); got != "GET http://x?token=***** failed" {
		t.Errorf("Mask = %q", got)
	}
}

func TestResolveFieldRef(t *testing.T) {
	owner := &v1alpha1.Rollout{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "shop", UID: "u1",
		Labels: map[string]string{"app": "web"}, Annotations: map[string]string{"team": "blue"}}}
	tests := map[string]struct {
		path, want, wantErr string
	}{
		"the name":            {path: "metadata.name", want: "web"},
		"the namespace":       {path: "metadata.namespace", want: "shop"},
		"the uid":             {path: "metadata.uid", want: "u1"},
		"a label":             {path: "metadata.labels['app']", want: "web"},
		"an annotation":       {path: "metadata.annotations['team']", want: "blue"},
		"a missing label":     {path: "metadata.labels['nope']", wantErr: "no such label"},
		"an unsupported path": {path: "spec.replicas", wantErr: "not supported"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := ResolveFieldRef(owner, tc.path)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Errorf("ResolveFieldRef = %q, %v; want %q", got, err, tc.want)
			}
		})
	}
	args, err := ResolveFieldRefs([]v1alpha1.Argument{{Name: "app", ValueFrom: &v1alpha1.ValueFrom{FieldRef: &v1alpha1.FieldRef{FieldPath: "metadata.labels['app']"}}}}, owner)
	if err != nil || args[0].Value.String() != "web" || args[0].ValueFrom != nil {
		t.Errorf("ResolveFieldRefs = %+v, %v", args, err)
	}
}
