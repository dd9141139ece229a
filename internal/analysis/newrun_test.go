package analysis

import (
	"os"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/skiffcd/skiff/api/v1alpha1"
)

func loadTemplate(t *testing.T, file string) *v1alpha1.AnalysisTemplate {
	t.Helper()
	data, err := os.ReadFile("testdata/" + file)
	if err != nil {
		t.Fatal(err)
	}
	var tmpl v1alpha1.AnalysisTemplate
	if err := yaml.UnmarshalStrict(data, &tmpl); err != nil {
		t.Fatal(err)
	}
	return &tmpl
}

func TestNewRun(t *testing.T) {
	arg := func(name, value string) v1alpha1.Argument {
		return v1alpha1.Argument{Name: name, Value: v1alpha1.NewAnyString(value)}
	}
	tmpl := func(args []v1alpha1.Argument, metrics ...string) *v1alpha1.AnalysisTemplate {
		t := &v1alpha1.AnalysisTemplate{Spec: v1alpha1.AnalysisTemplateSpec{Args: args}}
		for _, m := range metrics {
			t.Spec.Metrics = append(t.Spec.Metrics, v1alpha1.Metric{Name: m})
		}
		return t
	}
	tests := map[string]struct {
		templates   []*v1alpha1.AnalysisTemplate
		cluster     []*v1alpha1.ClusterAnalysisTemplate
		args        []v1alpha1.Argument
		wantMetrics []string
		wantArgs    map[string]string
		wantErr     string
	}{
		"the seeds' job template makes a run with its one metric": {
			templates:   []*v1alpha1.AnalysisTemplate{loadTemplate(t, "test-analysistemp.yml")},
			wantMetrics: []string{"test-analysis"},
		},
		"metrics of several templates are merged in order": {
			templates:   []*v1alpha1.AnalysisTemplate{tmpl(nil, "a", "b"), tmpl(nil, "c")},
			cluster:     []*v1alpha1.ClusterAnalysisTemplate{{Spec: v1alpha1.AnalysisTemplateSpec{Metrics: []v1alpha1.Metric{{Name: "d"}}}}},
			wantMetrics: []string{"a", "b", "c", "d"},
		},
		"two metrics of one name are an error": {
			templates: []*v1alpha1.AnalysisTemplate{tmpl(nil, "a"), tmpl(nil, "a")},
			wantErr:   `two metrics have the same name "a"`,
		},
		"a given arg overrides the template's default": {
			templates:   []*v1alpha1.AnalysisTemplate{tmpl([]v1alpha1.Argument{arg("svc", "default")}, "a")},
			args:        []v1alpha1.Argument{arg("svc", "web")},
			wantMetrics: []string{"a"}, wantArgs: map[string]string{"svc": "web"},
		},
		"a template default is kept when no arg is given": {
			templates:   []*v1alpha1.AnalysisTemplate{tmpl([]v1alpha1.Argument{arg("svc", "default")}, "a")},
			wantMetrics: []string{"a"}, wantArgs: map[string]string{"svc": "default"},
		},
		"a required arg that is not given is an error": {
			templates: []*v1alpha1.AnalysisTemplate{tmpl([]v1alpha1.Argument{{Name: "svc"}}, "a")},
			wantErr:   "args.svc was not resolved",
		},
		"an arg the templates do not declare is dropped": {
			templates:   []*v1alpha1.AnalysisTemplate{tmpl(nil, "a")},
			args:        []v1alpha1.Argument{arg("extra", "x")},
			wantMetrics: []string{"a"}, wantArgs: map[string]string{},
		},
		"a required arg of one template given a value by another is resolved": {
			templates:   []*v1alpha1.AnalysisTemplate{tmpl([]v1alpha1.Argument{{Name: "svc"}}, "a"), tmpl([]v1alpha1.Argument{arg("svc", "web")}, "b")},
			wantMetrics: []string{"a", "b"}, wantArgs: map[string]string{"svc": "web"},
		},
		"two templates giving one arg different values is an error": {
			templates: []*v1alpha1.AnalysisTemplate{tmpl([]v1alpha1.Argument{arg("svc", "a")}, "a"), tmpl([]v1alpha1.Argument{arg("svc", "b")}, "b")},
			wantErr:   `argument "svc" is specified multiple times with different values`,
		},
		"a secretKeyRef arg is kept as a reference, not a value": {
			templates:   []*v1alpha1.AnalysisTemplate{tmpl([]v1alpha1.Argument{{Name: "token", ValueFrom: &v1alpha1.ValueFrom{SecretKeyRef: &v1alpha1.SecretKeyRef{Name: "s", Key: "k"}}}}, "a")},
			wantMetrics: []string{"a"}, wantArgs: map[string]string{"token": ""},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			run, err := NewRun(tc.templates, tc.cluster, tc.args, "r", "ns", map[string]string{"l": "v"})
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if run.Name != "r" || run.Namespace != "ns" || run.Labels["l"] != "v" || run.Kind != "AnalysisRun" {
				t.Errorf("unexpected metadata: %+v %+v", run.TypeMeta, run.ObjectMeta)
			}
			var names []string
			for _, m := range run.Spec.Metrics {
				names = append(names, m.Name)
			}
			if strings.Join(names, ",") != strings.Join(tc.wantMetrics, ",") {
				t.Errorf("metrics = %v, want %v", names, tc.wantMetrics)
			}
			if tc.wantArgs != nil {
				got := map[string]string{}
				for _, a := range run.Spec.Args {
					got[a.Name] = a.Value.String()
				}
				if len(got) != len(tc.wantArgs) {
					t.Errorf("args = %v, want %v", got, tc.wantArgs)
				}
				for k, v := range tc.wantArgs {
					if got[k] != v {
						t.Errorf("args.%s = %q, want %q", k, got[k], v)
					}
				}
			}
		})
	}
}
