package knowntypes

import (
	"reflect"
	"strings"
	"testing"
)

func TestKnownNamesAreArgoCDs(t *testing.T) {
	for _, name := range []string{"core/v1/PodSpec", "apps/v1/DeploymentSpec", "core/v1/ResourceList", "core/Quantity", "meta/v1/Duration", "batch/v1/JobSpec"} {
		if !Known(name) {
			t.Errorf("%s is not known", name)
		}
	}
	for _, name := range []string{"v1/PodSpec", "core/v1/Nothing", "PodSpec"} {
		if Known(name) {
			t.Errorf("%s is known", name)
		}
	}
}

func TestNormalize(t *testing.T) {
	tests := map[string]struct {
		obj        map[string]any
		field, typ string
		want       map[string]any
		wantErr    string
	}{
		"a quantity in a ResourceList is spelled canonically": {
			obj:   map[string]any{"spec": map[string]any{"budget": map[string]any{"cpu": "1000m", "memory": "1024Mi"}}},
			field: "spec.budget", typ: "core/v1/ResourceList",
			want: map[string]any{"spec": map[string]any{"budget": map[string]any{"cpu": "1", "memory": "1Gi"}}},
		},
		"a list on the path applies the rest to each element": {
			obj: map[string]any{"spec": map[string]any{"pools": []any{
				map[string]any{"size": "1000m"}, map[string]any{"size": "2"}, "not an object"}}},
			field: "spec.pools.size", typ: "core/Quantity",
			want: map[string]any{"spec": map[string]any{"pools": []any{
				map[string]any{"size": "1"}, map[string]any{"size": "2"}, "not an object"}}},
		},
		"a duration is spelled as Go prints it": {
			obj:   map[string]any{"spec": map[string]any{"renewBefore": "720h"}},
			field: "spec.renewBefore", typ: "meta/v1/Duration",
			want: map[string]any{"spec": map[string]any{"renewBefore": "720h0m0s"}},
		},
		"an absent field is left alone": {
			obj: map[string]any{"spec": map[string]any{}}, field: "spec.template.spec", typ: "core/v1/PodSpec",
			want: map[string]any{"spec": map[string]any{}},
		},
		"a value that is not of the type is an error": {
			obj: map[string]any{"spec": map[string]any{"budget": "lots"}}, field: "spec.budget", typ: "core/v1/ResourceList",
			wantErr: "field spec.budget as core/v1/ResourceList:",
		},
		"an unknown type is an error": {
			obj: map[string]any{}, field: "spec", typ: "core/v1/Nothing",
			wantErr: "core/v1/Nothing is not a known Kubernetes type",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			err := Normalize(tc.obj, tc.field, tc.typ)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(tc.obj, tc.want) {
				t.Errorf("got %v, want %v", tc.obj, tc.want)
			}
		})
	}
}
