package diff

import (
	"encoding/json"
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/skiffcd/skiff/api/v1alpha1"
)

func TestRespectIgnores(t *testing.T) {
	const desired = `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web"},
		"spec":{"replicas":2,"template":{"spec":{"containers":[
			{"name":"web","image":"nginx:1.28","env":[{"name":"LEVEL","value":"info"},{"name":"MODE","value":"a"}]}]}}}}`
	const live = `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web"},
		"spec":{"replicas":5,"template":{"spec":{"containers":[
			{"name":"web","image":"nginx:1.27","env":[{"name":"LEVEL","value":"debug"}]}]}}}}`
	pointer := func(p ...string) []v1alpha1.ResourceIgnoreDifferences {
		return []v1alpha1.ResourceIgnoreDifferences{{Group: "apps", Kind: "Deployment", JSONPointers: p}}
	}
	jq := func(e ...string) []v1alpha1.ResourceIgnoreDifferences {
		return []v1alpha1.ResourceIgnoreDifferences{{Group: "apps", Kind: "Deployment", JQPathExpressions: e}}
	}
	tests := map[string]struct {
		rules []v1alpha1.ResourceIgnoreDifferences
		live  string
		// want is desired with these changes (path → value; nil removes).
		want map[string]any
	}{
		"an ignored field takes live's value": {
			rules: pointer("/spec/replicas"), live: live,
			want: map[string]any{"/spec/replicas": int64(5)},
		},
		"an ignored field live lacks is left out": {
			rules: pointer("/spec/paused"), live: live,
			want: map[string]any{},
		},
		"an ignored field only desired has is left out": {
			rules: pointer("/spec/replicas"), live: `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web"},"spec":{}}`,
			want: map[string]any{"/spec/replicas": nil},
		},
		"a jq expression takes the values it selects in live": {
			rules: jq(`.spec.template.spec.containers[] | select(.name == "web") | .env[] | select(.name == "LEVEL") | .value`), live: live,
			want: map[string]any{"/spec/template/spec/containers/0/env/0/value": "debug"},
		},
		"a jq expression leaves out what it selects only in desired": {
			rules: jq(`.spec.template.spec.containers[0].env[] | select(.name == "MODE")`), live: live,
			want: map[string]any{"/spec/template/spec/containers/0/env": []any{map[string]any{"name": "LEVEL", "value": "info"}}},
		},
		"a rule for another kind changes nothing": {
			rules: []v1alpha1.ResourceIgnoreDifferences{{Kind: "StatefulSet", JSONPointers: []string{"/spec/replicas"}}}, live: live,
			want: map[string]any{},
		},
		"a new object is applied as git has it": {
			rules: pointer("/spec/replicas"),
			want:  map[string]any{},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			d := parseObject(t, desired)
			var l *unstructured.Unstructured
			if tc.live != "" {
				l = parseObject(t, tc.live)
			}
			got, err := RespectIgnores(d, l, tc.rules)
			if err != nil {
				t.Fatal(err)
			}
			want := parseObject(t, desired)
			for p, v := range tc.want {
				tokens, _ := parsePointer(p)
				if v == nil {
					removePointer(want.Object, tokens)
					continue
				}
				path := make([]any, len(tokens))
				for i, tok := range tokens {
					path[i] = tok
				}
				setPath(want.Object, path, v)
			}
			if !reflect.DeepEqual(got.Object, want.Object) {
				gotJSON, _ := json.Marshal(got.Object)
				wantJSON, _ := json.Marshal(want.Object)
				t.Errorf("got  %s\nwant %s", gotJSON, wantJSON)
			}
			if !reflect.DeepEqual(d.Object, parseObject(t, desired).Object) {
				t.Error("RespectIgnores changed its input")
			}
		})
	}
}

// Fields another manager owns in live are left out of what is applied: the
// apply does not own them, so leaving them out leaves them alone.
func TestRespectIgnoresLeavesOutOtherManagersFields(t *testing.T) {
	d := parseObject(t, `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web"},"spec":{"replicas":2,"paused":false}}`)
	l := parseObject(t, `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","managedFields":[
		{"manager":"hpa","operation":"Update","apiVersion":"apps/v1","fieldsType":"FieldsV1","fieldsV1":{"f:spec":{"f:replicas":{}}}}]},
		"spec":{"replicas":5,"paused":false}}`)
	got, err := RespectIgnores(d, l, []v1alpha1.ResourceIgnoreDifferences{{Group: "apps", Kind: "Deployment", ManagedFieldsManagers: []string{"hpa"}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, found, _ := unstructured.NestedFieldNoCopy(got.Object, "spec", "replicas"); found {
		t.Errorf("replicas, owned by hpa, are still applied: %v", got.Object["spec"])
	}
	if _, found, _ := unstructured.NestedFieldNoCopy(got.Object, "spec", "paused"); !found {
		t.Errorf("paused, which hpa does not own, was left out: %v", got.Object["spec"])
	}
}

func parseObject(t *testing.T, js string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON([]byte(js)); err != nil {
		t.Fatal(err)
	}
	return u
}
