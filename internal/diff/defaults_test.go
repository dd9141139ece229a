package diff

import (
	"encoding/json"
	"reflect"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"
)

func TestFillDefaults(t *testing.T) {
	// A schema with defaults in an object, in the items of a list and in the
	// values of a map, as controller-gen writes them.
	const schemaYAML = `
type: object
properties:
  mode:
    type: string
    default: fast
  ports:
    type: array
    items:
      type: object
      properties:
        port: {type: integer}
        protocol: {type: string, default: TCP}
  limits:
    type: object
    additionalProperties:
      type: object
      properties:
        burst: {type: integer, default: 5}
`
	var s apiextensionsv1.JSONSchemaProps
	if err := yaml.Unmarshal([]byte(schemaYAML), &s); err != nil {
		t.Fatal(err)
	}
	tests := map[string]struct {
		in, want string
	}{
		"an absent field gets its default": {
			in: `{}`, want: `{"mode":"fast"}`,
		},
		"a set field keeps its value": {
			in: `{"mode":"slow"}`, want: `{"mode":"slow"}`,
		},
		"every item of a list gets the defaults it leaves out": {
			in:   `{"mode":"slow","ports":[{"port":80},{"port":53,"protocol":"UDP"}]}`,
			want: `{"mode":"slow","ports":[{"port":80,"protocol":"TCP"},{"port":53,"protocol":"UDP"}]}`,
		},
		"every value of a map gets the defaults it leaves out": {
			in:   `{"mode":"slow","limits":{"a":{},"b":{"burst":1}}}`,
			want: `{"mode":"slow","limits":{"a":{"burst":5},"b":{"burst":1}}}`,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			var got, want any
			if err := json.Unmarshal([]byte(tc.in), &got); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal([]byte(tc.want), &want); err != nil {
				t.Fatal(err)
			}
			fillDefaults(got, &s)
			if !reflect.DeepEqual(got, want) {
				gotJSON, _ := json.Marshal(got)
				t.Errorf("got %s, want %s", gotJSON, tc.want)
			}
		})
	}
}

// The defaults come from the CRDs Skiff ships: a Rollout's container port
// protocol is one, and kinds without defaults are left out.
func TestSchemaDefaultsOfTheEmbeddedCRDs(t *testing.T) {
	rollout := EmbeddedDefaults(schema.GroupVersionKind{Group: "argoproj.io", Version: "v1alpha1", Kind: "Rollout"})
	if rollout == nil {
		t.Error("no defaults for Rollout, whose pod template's ports default their protocol")
	}
	if EmbeddedDefaults(schema.GroupVersionKind{Group: "argoproj.io", Version: "v1alpha1", Kind: "AppProject"}) != nil {
		t.Error("defaults for AppProject, whose schema has none")
	}
	// What is kept is the path to the defaults, not the CRD's schema.
	if raw, _ := json.Marshal(rollout); len(raw) > 20<<10 {
		t.Errorf("the Rollout's pruned schema is %d bytes", len(raw))
	}
	ports := rollout.Properties["spec"].Properties["template"].Properties["spec"].Properties["containers"].Items.Schema.Properties["ports"].Items.Schema
	if string(ports.Properties["protocol"].Default.Raw) != `"TCP"` || len(ports.Properties) != 1 {
		t.Errorf("the pruned schema of a container port is %+v, want only protocol's default", ports.Properties)
	}
}

func TestPruneToDefaults(t *testing.T) {
	tests := map[string]struct {
		schema, want string
	}{
		"a schema without defaults prunes to nothing": {
			schema: `{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"array","items":{"type":"integer"}}}}`,
			want:   `null`,
		},
		"only the path to a default is kept": {
			schema: `{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"object","properties":{"c":{"type":"string","default":"x"},"d":{"type":"integer"}}}}}`,
			want:   `{"properties":{"b":{"properties":{"c":{"default":"x"}}}}}`,
		},
		"defaults in list items and map values are kept": {
			schema: `{"type":"object","properties":{"l":{"type":"array","items":{"type":"object","properties":{"p":{"type":"string","default":"TCP"}}}},"m":{"type":"object","additionalProperties":{"type":"object","properties":{"n":{"type":"integer","default":1}}}}}}`,
			want:   `{"properties":{"l":{"items":{"properties":{"p":{"default":"TCP"}}}},"m":{"additionalProperties":{"properties":{"n":{"default":1}}}}}}`,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			var s apiextensionsv1.JSONSchemaProps
			if err := json.Unmarshal([]byte(tc.schema), &s); err != nil {
				t.Fatal(err)
			}
			got, err := json.Marshal(PruneToDefaults(&s))
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want {
				t.Errorf("got %s, want %s", got, tc.want)
			}
		})
	}
}
