package clustercache

import (
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func managedEntry(manager string) map[string]any {
	return map[string]any{
		"manager": manager, "operation": "Apply", "apiVersion": "v1",
		"fieldsType": "FieldsV1", "fieldsV1": map[string]any{"f:data": map[string]any{"f:a": map[string]any{}}},
	}
}

func withManagedFields(u *unstructured.Unstructured, managers ...string) *unstructured.Unstructured {
	entries := make([]any, 0, len(managers))
	for _, m := range managers {
		entries = append(entries, managedEntry(m))
	}
	md := u.Object["metadata"].(map[string]any)
	md["managedFields"] = entries
	return u
}

func managerNames(u *unstructured.Unstructured) []string {
	var out []string
	for _, e := range u.GetManagedFields() {
		out = append(out, e.Manager)
	}
	return out
}

func TestTrim(t *testing.T) {
	withData := func(u *unstructured.Unstructured) *unstructured.Unstructured {
		u.Object["data"] = map[string]any{"a": "1"}
		return u
	}
	tracked := func() *unstructured.Unstructured {
		return withData(object("v1", "ConfigMap", "web", "cfg",
			map[string]string{TrackingAnnotation: "shop:/ConfigMap:web/cfg"}, nil))
	}
	tests := map[string]struct {
		obj          *unstructured.Unstructured
		mode         TrackingMode
		wantManagers []string
		// metadataOnly: only apiVersion, kind and metadata are kept.
		metadataOnly bool
	}{
		"an untracked object keeps its metadata without managedFields": {
			obj:          withManagedFields(withData(object("v1", "ConfigMap", "web", "cfg", map[string]string{"team": "web"}, nil)), "kubectl", "skiff"),
			mode:         TrackingAnnotationMode,
			metadataOnly: true,
		},
		"an object with a copied tracking annotation counts as untracked": {
			obj: withManagedFields(withData(object("v1", "Pod", "web", "api-7d9f",
				map[string]string{TrackingAnnotation: "shop:apps/Deployment:web/api"}, nil)), "kubelet"),
			mode:         TrackingAnnotationMode,
			metadataOnly: true,
		},
		"a tracked object keeps other managers and loses Skiff's own": {
			obj:          withManagedFields(tracked(), "skiff", "kube-controller-manager", "kubectl-edit"),
			mode:         TrackingAnnotationMode,
			wantManagers: []string{"kube-controller-manager", "kubectl-edit"},
		},
		"a tracked object with only Skiff's entry loses managedFields": {
			obj:  withManagedFields(tracked(), "skiff"),
			mode: TrackingAnnotationMode,
		},
		"a tracked object without Skiff's entry keeps every entry": {
			obj:          withManagedFields(tracked(), "kubectl", "hpa-controller"),
			mode:         TrackingAnnotationMode,
			wantManagers: []string{"kubectl", "hpa-controller"},
		},
		"label mode tracks by the instance label": {
			obj: withManagedFields(withData(object("v1", "ConfigMap", "web", "cfg", nil,
				map[string]string{InstanceLabel: "shop"})), "skiff", "kubectl"),
			mode:         TrackingLabelMode,
			wantManagers: []string{"kubectl"},
		},
		"label mode keeps tracking by an annotation written before the switch": {
			obj:          withManagedFields(tracked(), "kubectl"),
			mode:         TrackingLabelMode,
			wantManagers: []string{"kubectl"},
		},
		"a tracked object without managedFields stays as it is": {
			obj:  tracked(),
			mode: TrackingAnnotationMode,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			before := tc.obj.DeepCopy()
			trim(tc.obj, Tracking{Mode: tc.mode})
			if got := managerNames(tc.obj); !reflect.DeepEqual(got, tc.wantManagers) {
				t.Errorf("managers after trim = %v, want %v", got, tc.wantManagers)
			}
			if len(tc.wantManagers) == 0 {
				if _, ok := tc.obj.Object["metadata"].(map[string]any)["managedFields"]; ok {
					t.Errorf("an empty managedFields key was left behind")
				}
			}
			tc.obj.SetManagedFields(nil)
			before.SetManagedFields(nil)
			if tc.metadataOnly {
				// The body goes; metadata stays but for managedFields.
				delete(before.Object, "data")
			}
			if !reflect.DeepEqual(tc.obj.Object, before.Object) {
				t.Errorf("trim changed more than it should:\n got %v\nwant %v", tc.obj.Object, before.Object)
			}
		})
	}
}

// An object that needs no change is not written to: the informer may pass
// an object it already stored, which readers hold concurrently.
func TestTrimLeavesATrimmedObjectAlone(t *testing.T) {
	obj := withManagedFields(object("v1", "ConfigMap", "web", "cfg",
		map[string]string{TrackingAnnotation: "shop:/ConfigMap:web/cfg"}, nil), "skiff", "kubectl")
	trim(obj, DefaultTracking())
	first := obj.Object["metadata"].(map[string]any)["managedFields"].([]any)
	trim(obj, DefaultTracking())
	second := obj.Object["metadata"].(map[string]any)["managedFields"].([]any)
	if len(first) != 1 || &first[0] != &second[0] {
		t.Errorf("a second trim replaced the already trimmed managedFields")
	}
}
