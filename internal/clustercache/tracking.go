package clustercache

import (
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// TrackingAnnotation marks an object as managed by an Application, in
// Argo CD v3's default format `<app>:<group>/<kind>:<namespace>/<name>`.
const TrackingAnnotation = "argocd.argoproj.io/tracking-id"

// InstanceLabel is the label Argo CD's label tracking mode uses.
const InstanceLabel = "app.kubernetes.io/instance"

// TrackingMode says how objects are tied to their Application.
type TrackingMode string

// Tracking modes, as Argo CD's `application.resourceTrackingMethod`.
const (
	TrackingAnnotationMode TrackingMode = "annotation"
	TrackingLabelMode      TrackingMode = "label"
)

// TrackingID is the value of the tracking annotation for obj owned by app.
func TrackingID(app string, obj *unstructured.Unstructured) string {
	gvk := obj.GroupVersionKind()
	return fmt.Sprintf("%s:%s/%s:%s/%s", app, gvk.Group, gvk.Kind, obj.GetNamespace(), obj.GetName())
}

// OwningApp returns the Application that manages obj, or "" when none does.
// In annotation mode the annotation must describe obj itself: a copy that
// travelled into another object (a template's annotations copied into what
// it creates) does not make that object managed, so it is never pruned.
func OwningApp(obj *unstructured.Unstructured, mode TrackingMode) string {
	return owningApp(obj.GroupVersionKind(), obj, mode)
}

// owningApp is OwningApp for an object of kind gvk known by its metadata.
func owningApp(gvk schema.GroupVersionKind, obj metav1.Object, mode TrackingMode) string {
	if mode == TrackingLabelMode {
		return obj.GetLabels()[InstanceLabel]
	}
	id, ok := obj.GetAnnotations()[TrackingAnnotation]
	if !ok {
		return ""
	}
	app, rest, ok := strings.Cut(id, ":")
	if !ok || app == "" {
		return ""
	}
	if rest != fmt.Sprintf("%s/%s:%s/%s", gvk.Group, gvk.Kind, obj.GetNamespace(), obj.GetName()) {
		return ""
	}
	return app
}
