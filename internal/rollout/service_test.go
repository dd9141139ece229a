package rollout

import (
	"maps"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestKeepServiceSelector(t *testing.T) {
	service := func(annotated bool, selector map[string]any) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "v1", "kind": "Service",
			"metadata": map[string]any{"name": "web"},
			"spec":     map[string]any{"selector": selector},
		}}
		if annotated {
			u.SetAnnotations(map[string]string{AnnotationManagedBy: "web"})
		}
		return u
	}
	tests := map[string]struct {
		desired, live *unstructured.Unstructured
		want          map[string]string
	}{
		"the hash of a Service a Rollout steers is kept": {
			desired: service(false, map[string]any{"app": "web"}),
			live:    service(true, map[string]any{"app": "web", PodTemplateHashLabel: "abc"}),
			want:    map[string]string{"app": "web", PodTemplateHashLabel: "abc"},
		},
		"a hash desired names itself wins": {
			desired: service(false, map[string]any{"app": "web", PodTemplateHashLabel: "def"}),
			live:    service(true, map[string]any{"app": "web", PodTemplateHashLabel: "abc"}),
			want:    map[string]string{"app": "web", PodTemplateHashLabel: "def"},
		},
		"a Service no Rollout steers gets git's selector": {
			desired: service(false, map[string]any{"app": "web"}),
			live:    service(false, map[string]any{"app": "web", PodTemplateHashLabel: "abc"}),
			want:    map[string]string{"app": "web"},
		},
		"a steered Service without a hash yet gets git's selector": {
			desired: service(false, map[string]any{"app": "web"}),
			live:    service(true, map[string]any{"app": "web"}),
			want:    map[string]string{"app": "web"},
		},
		"a Service git gives no selector stays without one": {
			desired: service(false, nil),
			live:    service(true, map[string]any{"app": "web", PodTemplateHashLabel: "abc"}),
			want:    nil,
		},
		"a missing live Service changes nothing": {
			desired: service(false, map[string]any{"app": "web"}),
			want:    map[string]string{"app": "web"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			KeepServiceSelector(tc.desired, tc.live)
			got, _, _ := unstructured.NestedStringMap(tc.desired.Object, "spec", "selector")
			if !maps.Equal(got, tc.want) {
				t.Errorf("selector %v, want %v", got, tc.want)
			}
		})
	}
	t.Run("an object of another kind is left alone", func(t *testing.T) {
		desired := service(false, map[string]any{"app": "web"})
		desired.SetKind("Endpoints")
		live := service(true, map[string]any{"app": "web", PodTemplateHashLabel: "abc"})
		live.SetKind("Endpoints")
		KeepServiceSelector(desired, live)
		if got, _, _ := unstructured.NestedStringMap(desired.Object, "spec", "selector"); len(got) != 1 {
			t.Errorf("selector %v, want git's", got)
		}
	})
}
