package diff

import (
	"strings"
	"testing"

	"github.com/skiffcd/skiff/api/v1alpha1"
)

func TestUpdateFingerprintTellsIgnoredUpdatesApart(t *testing.T) {
	// old is the version before the update; each case's edit is applied to
	// it, as text, to make the new one.
	const old = `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","namespace":"shop",
		"resourceVersion":"10","generation":1,"annotations":{"team":"a"},
		"managedFields":[{"manager":"hpa","operation":"Update","apiVersion":"apps/v1","fieldsType":"FieldsV1",
			"fieldsV1":{"f:spec":{"f:replicas":{}}}}]},
		"spec":{"replicas":2,"paused":false},"status":{"readyReplicas":1}}`
	rules := func(r v1alpha1.ResourceIgnoreDifferences) []v1alpha1.ResourceIgnoreDifferences {
		r.Group, r.Kind = "apps", "Deployment"
		return []v1alpha1.ResourceIgnoreDifferences{r}
	}
	tests := map[string]struct {
		from, to string
		rules    []v1alpha1.ResourceIgnoreDifferences
		same     bool
	}{
		"a new resourceVersion and generation alone are ignored without rules": {
			from: `"resourceVersion":"10","generation":1`, to: `"resourceVersion":"11","generation":2`, same: true,
		},
		"a change of managedFields alone is ignored without rules": {
			from: `"operation":"Update"`, to: `"operation":"Apply"`, same: true,
		},
		"a status change is noticed without rules": {
			from: `"readyReplicas":1`, to: `"readyReplicas":2`,
		},
		"a status change is ignored by a JSON pointer to /status": {
			from: `"readyReplicas":1`, to: `"readyReplicas":2`,
			rules: rules(v1alpha1.ResourceIgnoreDifferences{JSONPointers: []string{"/status"}}), same: true,
		},
		"a spec change is noticed beside an ignored status": {
			from: `"paused":false`, to: `"paused":true`,
			rules: rules(v1alpha1.ResourceIgnoreDifferences{JSONPointers: []string{"/status"}}),
		},
		"an annotation is ignored by a jq path expression": {
			from: `"team":"a"`, to: `"team":"b"`,
			rules: rules(v1alpha1.ResourceIgnoreDifferences{JQPathExpressions: []string{`.metadata.annotations.team`}}), same: true,
		},
		"a field a managedFieldsManagers manager owns is ignored": {
			from: `"replicas":2`, to: `"replicas":5`,
			rules: rules(v1alpha1.ResourceIgnoreDifferences{ManagedFieldsManagers: []string{"hpa"}}), same: true,
		},
		"a field another manager owns is noticed": {
			from: `"replicas":2`, to: `"replicas":5`,
			rules: rules(v1alpha1.ResourceIgnoreDifferences{ManagedFieldsManagers: []string{"kubectl"}}),
		},
		"a rule of another kind ignores nothing": {
			from: `"readyReplicas":1`, to: `"readyReplicas":2`,
			rules: []v1alpha1.ResourceIgnoreDifferences{{Group: "apps", Kind: "StatefulSet", JSONPointers: []string{"/status"}}},
		},
		"a rule for every kind by glob applies": {
			from: `"readyReplicas":1`, to: `"readyReplicas":2`,
			rules: []v1alpha1.ResourceIgnoreDifferences{{Group: "*", Kind: "*", JSONPointers: []string{"/status"}}}, same: true,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if !strings.Contains(old, tc.from) {
				t.Fatalf("the case's from %q is not in the old version", tc.from)
			}
			a, b := parseObject(t, old), parseObject(t, strings.Replace(old, tc.from, tc.to, 1))
			fa, err := UpdateFingerprint(a, tc.rules)
			if err != nil {
				t.Fatal(err)
			}
			fb, err := UpdateFingerprint(b, tc.rules)
			if err != nil {
				t.Fatal(err)
			}
			if (fa == fb) != tc.same {
				t.Errorf("fingerprints equal = %v, want %v", fa == fb, tc.same)
			}
			if a.GetResourceVersion() != "10" || len(a.GetManagedFields()) != 1 {
				t.Errorf("UpdateFingerprint changed its input: %v", a.Object["metadata"])
			}
		})
	}
}
