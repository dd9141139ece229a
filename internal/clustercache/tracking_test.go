package clustercache

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func object(apiVersion, kind, ns, name string, annotations, labels map[string]string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion(apiVersion)
	u.SetKind(kind)
	u.SetNamespace(ns)
	u.SetName(name)
	u.SetAnnotations(annotations)
	u.SetLabels(labels)
	return u
}

func TestOwningApp(t *testing.T) {
	tests := map[string]struct {
		obj  *unstructured.Unstructured
		mode TrackingMode
		want string
	}{
		"an annotation describing the object names its app": {
			obj: object("apps/v1", "Deployment", "web", "api",
				map[string]string{TrackingAnnotation: "shop:apps/Deployment:web/api"}, nil),
			mode: TrackingAnnotationMode, want: "shop",
		},
		"a core object has an empty group": {
			obj: object("v1", "ConfigMap", "web", "cfg",
				map[string]string{TrackingAnnotation: "shop:/ConfigMap:web/cfg"}, nil),
			mode: TrackingAnnotationMode, want: "shop",
		},
		"a cluster-scoped object has an empty namespace": {
			obj: object("v1", "Namespace", "", "web",
				map[string]string{TrackingAnnotation: "shop:/Namespace:/web"}, nil),
			mode: TrackingAnnotationMode, want: "shop",
		},
		"an annotation copied onto another object does not track it": {
			obj: object("v1", "Pod", "web", "api-7d9f",
				map[string]string{TrackingAnnotation: "shop:apps/Deployment:web/api"}, nil),
			mode: TrackingAnnotationMode, want: "",
		},
		"an object without the annotation is not tracked": {
			obj:  object("v1", "ConfigMap", "web", "cfg", nil, map[string]string{InstanceLabel: "shop"}),
			mode: TrackingAnnotationMode, want: "",
		},
		"a malformed annotation is not tracking": {
			obj: object("v1", "ConfigMap", "web", "cfg",
				map[string]string{TrackingAnnotation: "no-separator"}, nil),
			mode: TrackingAnnotationMode, want: "",
		},
		"label mode reads the instance label": {
			obj:  object("v1", "ConfigMap", "web", "cfg", nil, map[string]string{InstanceLabel: "shop"}),
			mode: TrackingLabelMode, want: "shop",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := OwningApp(tc.obj, tc.mode); got != tc.want {
				t.Errorf("OwningApp = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestTrackingIDRoundTrips(t *testing.T) {
	obj := object("apps/v1", "Deployment", "web", "api", nil, nil)
	obj.SetAnnotations(map[string]string{TrackingAnnotation: TrackingID("shop", obj)})
	if got := OwningApp(obj, TrackingAnnotationMode); got != "shop" {
		t.Errorf("OwningApp(TrackingID) = %q, want shop", got)
	}
}
