package diff

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/skiffcd/skiff/api/v1alpha1"
	"github.com/skiffcd/skiff/internal/mask"
)

// load reads a YAML fixture the way manifests reach Skiff: YAML to JSON to
// unstructured, so integers are int64.
func load(t *testing.T, name string) *unstructured.Unstructured {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	js, err := yaml.YAMLToJSON(raw)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(js); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return u
}

func TestCompareFixtures(t *testing.T) {
	deploymentRule := func(r v1alpha1.ResourceIgnoreDifferences) []v1alpha1.ResourceIgnoreDifferences {
		r.Group, r.Kind = "apps", "Deployment"
		return []v1alpha1.ResourceIgnoreDifferences{r}
	}
	tests := map[string]struct {
		desired, live string
		ignore        []v1alpha1.ResourceIgnoreDifferences
		modified      bool
		diffHas       []string
		diffLacks     []string
	}{
		"fields the server defaulted on a Deployment are not a difference": {
			desired: "deployment/desired.yaml", live: "deployment/live.yaml",
		},
		"a changed container image is a difference shown in the diff": {
			desired: "deployment/desired-image.yaml", live: "deployment/live.yaml",
			modified:  true,
			diffHas:   []string{"--- live", "+++ desired", "-        image: nginx:1.26", "+        image: nginx:1.27"},
			diffLacks: []string{"terminationMessagePath", "status", "managedFields"},
		},
		"env vars in another order are matched by name": {
			desired: "deployment/desired-env-order.yaml", live: "deployment/live.yaml",
		},
		"0.5 cpu equals 500m and 1073741824 bytes equals 1Gi": {
			desired: "deployment/desired-cpu.yaml", live: "deployment/live.yaml",
		},
		"more memory is a difference": {
			desired: "deployment/desired-memory.yaml", live: "deployment/live.yaml",
			modified: true,
			diffHas:  []string{"-            memory: 1Gi", "+            memory: 2Gi"},
		},
		"replicas the HPA set are ignored when desired omits them": {
			desired: "deployment/desired.yaml", live: "deployment/live.yaml",
		},
		"replicas desired sets differently are a difference": {
			desired: "deployment/desired-replicas.yaml", live: "deployment/live.yaml",
			modified: true,
			diffHas:  []string{"-  replicas: 5", "+  replicas: 3"},
		},
		"a label another controller added on live is not a difference": {
			desired: "deployment/desired.yaml", live: "deployment/live.yaml",
		},
		"a changed label desired sets is a difference": {
			desired: "deployment/desired-label.yaml", live: "deployment/live.yaml",
			modified: true,
			diffHas:  []string{"+    app: storefront", "team.example.com/owner: payments"},
		},
		"a json pointer ignores the changed image": {
			desired: "deployment/desired-image.yaml", live: "deployment/live.yaml",
			ignore: deploymentRule(v1alpha1.ResourceIgnoreDifferences{JSONPointers: []string{"/spec/template/spec/containers/0/image"}}),
		},
		"a jq path expression ignores the changed image": {
			desired: "deployment/desired-image.yaml", live: "deployment/live.yaml",
			ignore: deploymentRule(v1alpha1.ResourceIgnoreDifferences{JQPathExpressions: []string{`.spec.template.spec.containers[] | select(.name == "web") | .image`}}),
		},
		"a jq path expression that fits no field leaves the difference": {
			desired: "deployment/desired-image.yaml", live: "deployment/live.yaml",
			ignore:   deploymentRule(v1alpha1.ResourceIgnoreDifferences{JQPathExpressions: []string{`.spec.template.spec.initContainers[] | select(.name == "injected")`}}),
			modified: true,
		},
		"fields kube-controller-manager owns in live are ignored": {
			desired: "deployment/desired-replicas.yaml", live: "deployment/live.yaml",
			ignore: deploymentRule(v1alpha1.ResourceIgnoreDifferences{ManagedFieldsManagers: []string{"kube-controller-manager"}}),
		},
		"managed fields of another manager do not hide the difference": {
			desired: "deployment/desired-replicas.yaml", live: "deployment/live.yaml",
			ignore:   deploymentRule(v1alpha1.ResourceIgnoreDifferences{ManagedFieldsManagers: []string{"team-labeler"}}),
			modified: true,
		},
		"a rule for another kind does not apply": {
			desired: "deployment/desired-image.yaml", live: "deployment/live.yaml",
			ignore:   []v1alpha1.ResourceIgnoreDifferences{{Kind: "Service", JSONPointers: []string{"/spec"}}},
			modified: true,
		},
		"a rule with a wildcard kind applies": {
			desired: "deployment/desired-image.yaml", live: "deployment/live.yaml",
			ignore: []v1alpha1.ResourceIgnoreDifferences{{Group: "*", Kind: "*", JSONPointers: []string{"/spec/template/spec/containers/0/image"}}},
		},
		"a Secret written as stringData equals its stored data": {
			desired: "secret/desired.yaml", live: "secret/live.yaml",
		},
		"a changed Secret value is detected but never shown": {
			desired: "secret/desired-password.yaml", live: "secret/live.yaml",
			modified:  true,
			diffHas:   []string{"-  password: " + mask.Placeholder, "+  password: " + mask.Placeholder + " (changed)"},
			diffLacks: []string{"hunter2", "aHVudGVyMg==", "correct-horse", "Y29ycmVjdC1ob3JzZQ==", "YWRtaW4=", "user: " + mask.Placeholder + " (changed)"},
		},
		"a list of a custom resource is compared as a whole": {
			desired: "widget/desired.yaml", live: "widget/live.yaml",
			modified: true,
			diffHas:  []string{"-  - name: injected"},
		},
		"a jq path expression removes the injected item of a custom resource": {
			desired: "widget/desired.yaml", live: "widget/live.yaml",
			ignore: []v1alpha1.ResourceIgnoreDifferences{{Group: "example.com", Kind: "Widget", Name: "w",
				JQPathExpressions: []string{`.spec.items[] | select(.name == "injected")`}}},
		},
		"a Service with defaulted fields is not a difference": {
			desired: "service/desired.yaml", live: "service/live.yaml",
		},
		"a port protocol the Rollout schema defaulted is not a difference": {
			desired: "rollout/desired.yaml", live: "rollout/live.yaml",
		},
		"a port protocol desired sets differently from the default is a difference": {
			desired: "rollout/desired-udp.yaml", live: "rollout/live.yaml",
			modified: true,
			diffHas:  []string{"-          protocol: TCP", "+          protocol: UDP"},
		},
		"the pod-template hash a Rollout put in its Service's selector is not a difference": {
			desired: "service/desired.yaml", live: "service/live-rollout.yaml",
		},
		"a hash in the selector of a Service no Rollout steers is a difference": {
			desired: "service/desired.yaml", live: "service/live-hash-unmanaged.yaml",
			modified: true,
			diffHas:  []string{"-    rollouts-pod-template-hash: 6b4fcf9996"},
		},
		"a string targetPort differs from the same number": {
			desired: "service/desired-string-port.yaml", live: "service/live.yaml",
			modified: true,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			res, err := Compare(load(t, tc.desired), load(t, tc.live), Options{IgnoreDifferences: tc.ignore})
			if err != nil {
				t.Fatalf("Compare: %v", err)
			}
			if res.Modified != tc.modified {
				t.Fatalf("Modified = %v, want %v; diff:\n%s", res.Modified, tc.modified, res.Diff)
			}
			if m, err := Modified(load(t, tc.desired), load(t, tc.live), Options{IgnoreDifferences: tc.ignore}); err != nil || m != tc.modified {
				t.Errorf("Modified() = %v, %v; want %v as Compare says", m, err, tc.modified)
			}
			if !tc.modified && res.Diff != "" {
				t.Errorf("unmodified result has a diff:\n%s", res.Diff)
			}
			if tc.modified && res.Diff == "" {
				t.Errorf("modified result has no diff")
			}
			for _, s := range tc.diffHas {
				if !strings.Contains(res.Diff, s) {
					t.Errorf("diff lacks %q:\n%s", s, res.Diff)
				}
			}
			for _, s := range tc.diffLacks {
				if strings.Contains(res.Diff, s) {
					t.Errorf("diff shows %q:\n%s", s, res.Diff)
				}
			}
		})
	}
}

func TestCompareMissingAndExtraneous(t *testing.T) {
	tests := map[string]struct {
		desired, live string
		modified      bool
	}{
		"an object missing from the cluster is modified":      {desired: "secret/desired-password.yaml", modified: true},
		"an object only in the cluster is left to the caller": {live: "secret/live.yaml"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			var desired, live *unstructured.Unstructured
			if tc.desired != "" {
				desired = load(t, tc.desired)
			}
			if tc.live != "" {
				live = load(t, tc.live)
			}
			res, err := Compare(desired, live, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if res.Modified != tc.modified {
				t.Fatalf("Modified = %v, want %v", res.Modified, tc.modified)
			}
			if m, err := Modified(desired, live, Options{}); err != nil || m != tc.modified {
				t.Errorf("Modified() = %v, %v; want %v as Compare says", m, err, tc.modified)
			}
			for _, o := range []*unstructured.Unstructured{res.Desired, res.Live} {
				if o == nil {
					continue
				}
				text, _ := yaml.Marshal(o.Object)
				if strings.Contains(string(text), "hunter2") || strings.Contains(string(text), "Y29ycmVjdC1ob3JzZQ") || strings.Contains(string(text), "correct-horse") {
					t.Errorf("secret value shown:\n%s", text)
				}
			}
			if strings.Contains(res.Diff, "correct-horse") {
				t.Errorf("secret value in diff:\n%s", res.Diff)
			}
		})
	}
}

func TestCompareDiffIsStable(t *testing.T) {
	desired, live := load(t, "deployment/desired-image.yaml"), load(t, "deployment/live.yaml")
	first, err := Compare(desired, live, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for range 20 {
		res, err := Compare(desired, live, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if res.Diff != first.Diff {
			t.Fatalf("diff changed between runs:\n%s\nthen:\n%s", first.Diff, res.Diff)
		}
	}
}

func TestCompareDoesNotChangeItsInputs(t *testing.T) {
	desired, live := load(t, "deployment/desired-image.yaml"), load(t, "deployment/live.yaml")
	d0, l0 := desired.DeepCopy(), live.DeepCopy()
	if _, err := Compare(desired, live, Options{IgnoreDifferences: []v1alpha1.ResourceIgnoreDifferences{{Group: "apps", Kind: "Deployment",
		JSONPointers: []string{"/spec/template/spec/containers/0/env/0"}, JQPathExpressions: []string{".spec.replicas"}}}}); err != nil {
		t.Fatal(err)
	}
	if !equalJSON(t, desired, d0) || !equalJSON(t, live, l0) {
		t.Fatal("Compare modified its inputs")
	}
}

func equalJSON(t *testing.T, a, b *unstructured.Unstructured) bool {
	t.Helper()
	ja, err := a.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	jb, err := b.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	return string(ja) == string(jb)
}

func TestCompareNumbers(t *testing.T) {
	tests := map[string]struct {
		desired, live any
		modified      bool
	}{
		"an integral float equals the same integer":  {desired: float64(3), live: int64(3)},
		"an int equals the same int64":               {desired: 3, live: int64(3)},
		"a fractional float differs from an integer": {desired: 3.5, live: int64(3), modified: true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			obj := func(v any) *unstructured.Unstructured {
				return &unstructured.Unstructured{Object: map[string]any{
					"apiVersion": "example.com/v1", "kind": "Widget",
					"metadata": map[string]any{"name": "w"},
					"spec":     map[string]any{"size": v},
				}}
			}
			res, err := Compare(obj(tc.desired), obj(tc.live), Options{})
			if err != nil {
				t.Fatal(err)
			}
			if res.Modified != tc.modified {
				t.Fatalf("Modified = %v, want %v:\n%s", res.Modified, tc.modified, res.Diff)
			}
		})
	}
}

func TestCompareRejectsABadJQExpression(t *testing.T) {
	opts := Options{IgnoreDifferences: []v1alpha1.ResourceIgnoreDifferences{
		{Group: "example.com", Kind: "Widget", JQPathExpressions: []string{".spec.items[] | select("}}}}
	if _, err := Compare(load(t, "widget/desired.yaml"), load(t, "widget/live.yaml"), opts); err == nil {
		t.Fatal("want an error for an unparsable jq expression")
	}
	if _, err := Modified(load(t, "widget/desired.yaml"), load(t, "widget/live.yaml"), opts); err == nil {
		t.Fatal("Modified: want an error for an unparsable jq expression")
	}
}

func TestIgnoreExtraneous(t *testing.T) {
	tests := map[string]struct {
		annotation string
		want       bool
	}{
		"no annotation":                 {want: false},
		"IgnoreExtraneous alone":        {annotation: "IgnoreExtraneous", want: true},
		"IgnoreExtraneous among others": {annotation: "ServerSideDiff=true, IgnoreExtraneous", want: true},
		"another option only":           {annotation: "ServerSideDiff=true", want: false},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			obj := &unstructured.Unstructured{Object: map[string]any{"kind": "ConfigMap", "metadata": map[string]any{"name": "c"}}}
			if tc.annotation != "" {
				obj.SetAnnotations(map[string]string{"argocd.argoproj.io/compare-options": tc.annotation})
			}
			if got := IgnoreExtraneous(obj); got != tc.want {
				t.Fatalf("IgnoreExtraneous = %v, want %v", got, tc.want)
			}
		})
	}
	if IgnoreExtraneous(nil) {
		t.Fatal("IgnoreExtraneous(nil) = true")
	}
}
