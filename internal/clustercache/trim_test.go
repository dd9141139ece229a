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
	tracked := func() *unstructured.Unstructured {
		return object("v1", "ConfigMap", "web", "cfg",
			map[string]string{TrackingAnnotation: "shop:/ConfigMap:web/cfg"}, nil)
	}
	tests := map[string]struct {
		obj          *unstructured.Unstructured
		mode         TrackingMode
		wantManagers []string
	}{
		"an untracked object loses all its managedFields": {
			obj:  withManagedFields(object("v1", "ConfigMap", "web", "cfg", nil, nil), "kubectl", "skiff"),
			mode: TrackingAnnotationMode,
		},
		"an object with a copied tracking annotation counts as untracked": {
			obj: withManagedFields(object("v1", "Pod", "web", "api-7d9f",
				map[string]string{TrackingAnnotation: "shop:apps/Deployment:web/api"}, nil), "kubelet"),
			mode: TrackingAnnotationMode,
		},
		"a tracked object keeps other managers and loses Skiff's own": {
			obj:          withManagedFields(tracked(), "skiff", "kube-controller-manager", "kubectl-edit"),
			mode:         TrackingAnnotationMode,
			wantManagers: []string{"kube-controller-manager", "kubectl-edit"},
		},
		"a tracked object managed by Skiff alone has no managedFields left": {
			obj:  withManagedFields(tracked(), "skiff"),
			mode: TrackingAnnotationMode,
		},
		"a tracked object without Skiff's entry keeps every entry": {
			obj:          withManagedFields(tracked(), "kubectl", "hpa-controller"),
			mode:         TrackingAnnotationMode,
			wantManagers: []string{"kubectl", "hpa-controller"},
		},
		"label mode tracks by the instance label": {
			obj: withManagedFields(object("v1", "ConfigMap", "web", "cfg", nil,
				map[string]string{InstanceLabel: "shop"}), "skiff", "kubectl"),
			mode:         TrackingLabelMode,
			wantManagers: []string{"kubectl"},
		},
		"label mode ignores the annotation": {
			obj:  withManagedFields(tracked(), "kubectl"),
			mode: TrackingLabelMode,
		},
		"an object without managedFields stays as it is": {
			obj:  tracked(),
			mode: TrackingAnnotationMode,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			before := tc.obj.DeepCopy()
			trim(tc.obj, tc.mode)
			if got := managerNames(tc.obj); !reflect.DeepEqual(got, tc.wantManagers) {
				t.Errorf("managers after trim = %v, want %v", got, tc.wantManagers)
			}
			if len(tc.wantManagers) == 0 {
				if _, ok := tc.obj.Object["metadata"].(map[string]any)["managedFields"]; ok {
					t.Errorf("an empty managedFields key was left behind")
				}
			}
			// Everything but managedFields is untouched.
			tc.obj.SetManagedFields(nil)
			before.SetManagedFields(nil)
			if !reflect.DeepEqual(tc.obj.Object, before.Object) {
				t.Errorf("trim changed more than managedFields:\n got %v\nwant %v", tc.obj.Object, before.Object)
			}
		})
	}
}

// An object that needs no change is not written to: the informer may pass
// an object it already stored, which readers hold concurrently.
func TestTrimLeavesATrimmedObjectAlone(t *testing.T) {
	obj := withManagedFields(object("v1", "ConfigMap", "web", "cfg",
		map[string]string{TrackingAnnotation: "shop:/ConfigMap:web/cfg"}, nil), "skiff", "kubectl")
	trim(obj, TrackingAnnotationMode)
	first := obj.Object["metadata"].(map[string]any)["managedFields"].([]any)
	trim(obj, TrackingAnnotationMode)
	second := obj.Object["metadata"].(map[string]any)["managedFields"].([]any)
	if len(first) != 1 || &first[0] != &second[0] {
		t.Errorf("a second trim replaced the already trimmed managedFields")
	}
}
