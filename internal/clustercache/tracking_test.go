package clustercache

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
		obj      *unstructured.Unstructured
		mode     TrackingMode
		labelKey string
		want     string
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
		"label mode reads the instance label argocd-cm names": {
			obj:  object("v1", "ConfigMap", "web", "cfg", nil, map[string]string{InstanceLabel: "helm-release", "example.com/app": "shop"}),
			mode: TrackingLabelMode, labelKey: "example.com/app", want: "shop",
		},
		"label mode's label wins over an annotation naming another app": {
			obj: object("v1", "ConfigMap", "web", "cfg",
				map[string]string{TrackingAnnotation: "old:/ConfigMap:web/cfg"}, map[string]string{InstanceLabel: "shop"}),
			mode: TrackingLabelMode, want: "shop",
		},
		"label mode keeps an object tracked by the annotation before the switch": {
			obj: object("v1", "ConfigMap", "web", "cfg",
				map[string]string{TrackingAnnotation: "shop:/ConfigMap:web/cfg"}, nil),
			mode: TrackingLabelMode, want: "shop",
		},
		"label mode leaves an owned object's inherited label alone": {
			obj:  owned(object("apps/v1", "ReplicaSet", "web", "api-7d9f", nil, map[string]string{InstanceLabel: "shop"})),
			mode: TrackingLabelMode, want: "",
		},
		"annotation+label mode reads the annotation, not the label": {
			obj: object("v1", "ConfigMap", "web", "cfg",
				map[string]string{TrackingAnnotation: "shop:/ConfigMap:web/cfg"}, map[string]string{InstanceLabel: "helm-release"}),
			mode: TrackingAnnotationAndLabelMode, want: "shop",
		},
		"annotation+label mode does not take the label alone": {
			obj:  object("v1", "ConfigMap", "web", "cfg", nil, map[string]string{InstanceLabel: "shop"}),
			mode: TrackingAnnotationAndLabelMode, want: "",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := OwningApp(tc.obj, Tracking{Mode: tc.mode, LabelKey: tc.labelKey}); got != tc.want {
				t.Errorf("OwningApp = %q, want %q", got, tc.want)
			}
		})
	}
}

func owned(u *unstructured.Unstructured) *unstructured.Unstructured {
	u.SetOwnerReferences([]metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "Deployment", Name: "api", UID: "uid-1"}})
	return u
}

func TestTrackWritesWhatEachModeReads(t *testing.T) {
	tests := map[string]struct {
		tracking       Tracking
		wantAnnotation bool
		wantLabel      string
	}{
		"annotation writes the annotation only":  {tracking: Tracking{Mode: TrackingAnnotationMode}, wantAnnotation: true},
		"label writes the label only":            {tracking: Tracking{Mode: TrackingLabelMode}, wantLabel: InstanceLabel},
		"annotation+label writes both":           {tracking: Tracking{Mode: TrackingAnnotationAndLabelMode}, wantAnnotation: true, wantLabel: InstanceLabel},
		"a custom instance label key is written": {tracking: Tracking{Mode: TrackingLabelMode, LabelKey: "example.com/app"}, wantLabel: "example.com/app"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			obj := object("apps/v1", "Deployment", "web", "api", map[string]string{"keep": "me"}, nil)
			Track(obj, "shop", tc.tracking)
			_, annotated := obj.GetAnnotations()[TrackingAnnotation]
			if annotated != tc.wantAnnotation || obj.GetAnnotations()["keep"] != "me" {
				t.Errorf("annotations %v, want the tracking annotation %v", obj.GetAnnotations(), tc.wantAnnotation)
			}
			labels := obj.GetLabels()
			if tc.wantLabel != "" && labels[tc.wantLabel] != "shop" || tc.wantLabel == "" && len(labels) > 0 {
				t.Errorf("labels %v, want %q=shop", labels, tc.wantLabel)
			}
			if got := OwningApp(obj, tc.tracking); got != "shop" {
				t.Errorf("OwningApp after Track = %q, want shop", got)
			}
		})
	}
}

func TestTrackingIDRoundTrips(t *testing.T) {
	obj := object("apps/v1", "Deployment", "web", "api", nil, nil)
	obj.SetAnnotations(map[string]string{TrackingAnnotation: TrackingID("shop", obj)})
	if got := OwningApp(obj, DefaultTracking()); got != "shop" {
		t.Errorf("OwningApp(TrackingID) = %q, want shop", got)
	}
}
