package diff

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/skiffcd/skiff/internal/argocdcm"
)

// argocd-cm's ignoreDifferences and compare options, as the controller adds
// them to every app's rules, leave their fields out of the diff.
func TestArgoCDConfigMapIgnoreDifferences(t *testing.T) {
	const cm = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: n}\n"
	const aggregated = "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata: {name: r}\naggregationRule: {clusterRoleSelectors: [{matchLabels: {x: y}}]}\n"
	const plain = "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata: {name: r}\n"
	const rules = "rules: [{apiGroups: [''], resources: [pods], verbs: [get]}]\n"
	tests := map[string]struct {
		data          map[string]string
		desired, live string
		want          bool
	}{
		"a per-kind jsonPointer ignores its field": {
			data:    map[string]string{"resource.customizations.ignoreDifferences.ConfigMap": "jsonPointers: [/data/drift]\n"},
			desired: cm + "data: {drift: a, k: v}\n", live: cm + "data: {drift: b, k: v}\n",
		},
		"a per-kind jsonPointer leaves the other fields compared": {
			data:    map[string]string{"resource.customizations.ignoreDifferences.ConfigMap": "jsonPointers: [/data/drift]\n"},
			desired: cm + "data: {drift: a, k: v}\n", live: cm + "data: {drift: b, k: w}\n",
			want: true,
		},
		"all's jqPathExpressions apply to every kind, core ones included": {
			data:    map[string]string{"resource.customizations.ignoreDifferences.all": "jqPathExpressions: ['.data.drift']\n"},
			desired: cm + "data: {drift: a}\n", live: cm + "data: {drift: b}\n",
		},
		"the whole form's ignoreDifferences apply too": {
			data:    map[string]string{"resource.customizations": "ConfigMap:\n  ignoreDifferences: |\n    jsonPointers: [/data]\n"},
			desired: cm + "data: {k: a}\n", live: cm + "data: {k: b}\n",
		},
		"without argocd-cm rules the drift is a difference": {
			desired: cm + "data: {drift: a}\n", live: cm + "data: {drift: b}\n",
			want: true,
		},
		"ignoreAggregatedRoles leaves out the rules the API server fills in": {
			data:    map[string]string{"resource.compareoptions": "ignoreAggregatedRoles: true\n"},
			desired: aggregated + "rules: [{apiGroups: [''], resources: [pods], verbs: [list]}]\n", live: aggregated + rules,
		},
		"ignoreAggregatedRoles leaves the rules of a role without aggregationRule compared": {
			data:    map[string]string{"resource.compareoptions": "ignoreAggregatedRoles: true\n"},
			desired: plain + "rules: [{apiGroups: [''], resources: [pods], verbs: [list]}]\n", live: plain + rules,
			want: true,
		},
		"aggregated rules are compared without ignoreAggregatedRoles": {
			desired: aggregated + "rules: [{apiGroups: [''], resources: [pods], verbs: [list]}]\n", live: aggregated + rules,
			want: true,
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			settings, errs := argocdcm.Parse(tt.data)
			if len(errs) > 0 {
				t.Fatal(errs)
			}
			got, err := Modified(yamlObject(t, tt.desired), yamlObject(t, tt.live), Options{IgnoreDifferences: settings.Resource.IgnoreRules()})
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Fatalf("Modified = %v, want %v", got, tt.want)
			}
		})
	}
}

// argocd-cm's knownTypeFields compare a custom resource's field as the
// Kubernetes type it holds: a quantity spelled 1000m in git and "1" live
// is the same value only when the field is declared.
func TestArgoCDConfigMapKnownTypeFields(t *testing.T) {
	const widget = "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w, namespace: prod}\n"
	const budgetIsResourceList = "- field: spec.budget\n  type: core/v1/ResourceList\n"
	tests := map[string]struct {
		data          map[string]string
		desired, live string
		want          bool
		wantErr       string
	}{
		"cpu 1000m in git and 1 live in a declared ResourceList are equal": {
			data:    map[string]string{"resource.customizations.knownTypeFields.example.com_Widget": budgetIsResourceList},
			desired: widget + "spec: {budget: {cpu: 1000m}}\n", live: widget + "spec: {budget: {cpu: '1'}}\n",
		},
		"cpu 1000m in git and 1 live differ without the setting": {
			desired: widget + "spec: {budget: {cpu: 1000m}}\n", live: widget + "spec: {budget: {cpu: '1'}}\n",
			want: true,
		},
		"the setting of another kind does not apply": {
			data:    map[string]string{"resource.customizations.knownTypeFields.example.com_Gadget": budgetIsResourceList},
			desired: widget + "spec: {budget: {cpu: 1000m}}\n", live: widget + "spec: {budget: {cpu: '1'}}\n",
			want: true,
		},
		"another quantity is still a difference with the setting": {
			data:    map[string]string{"resource.customizations.knownTypeFields.example.com_Widget": budgetIsResourceList},
			desired: widget + "spec: {budget: {cpu: 2000m}}\n", live: widget + "spec: {budget: {cpu: '1'}}\n",
			want: true,
		},
		"the whole form's knownTypeFields apply too, through a list": {
			data:    map[string]string{"resource.customizations": "example.com/Widget:\n  knownTypeFields:\n  - field: spec.pools.size\n    type: core/Quantity\n"},
			desired: widget + "spec: {pools: [{name: a, size: 500m}]}\n", live: widget + "spec: {pools: [{name: a, size: '0.5'}]}\n",
		},
		"a value that is not of its type is an error naming the object": {
			data:    map[string]string{"resource.customizations.knownTypeFields.example.com_Widget": budgetIsResourceList},
			desired: widget + "spec: {budget: lots}\n", live: widget + "spec: {budget: {cpu: '1'}}\n",
			wantErr: "knownTypeFields of Widget prod/w: field spec.budget as core/v1/ResourceList:",
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			settings, errs := argocdcm.Parse(tt.data)
			if len(errs) > 0 {
				t.Fatal(errs)
			}
			got, err := Modified(yamlObject(t, tt.desired), yamlObject(t, tt.live), Options{KnownTypeFields: settings.Resource.KnownTypeFields()})
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Fatalf("Modified = %v, want %v", got, tt.want)
			}
		})
	}
}

func yamlObject(t *testing.T, y string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(y), &u.Object); err != nil {
		t.Fatal(err)
	}
	return u
}
