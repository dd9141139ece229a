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

// InstanceLabel is the label Argo CD's label tracking modes write, unless
// argocd-cm's application.instanceLabelKey names another.
const InstanceLabel = "app.kubernetes.io/instance"

// TrackingMode says how objects are tied to their Application.
type TrackingMode string

// Tracking modes, as Argo CD's `application.resourceTrackingMethod`:
// annotation+label writes both and reads the annotation, the label being
// for other tools.
const (
	TrackingAnnotationMode         TrackingMode = "annotation"
	TrackingLabelMode              TrackingMode = "label"
	TrackingAnnotationAndLabelMode TrackingMode = "annotation+label"
)

// Tracking is how objects are tied to their Application: a mode and the
// instance label's key ("" for InstanceLabel).
type Tracking struct {
	Mode     TrackingMode
	LabelKey string
}

// DefaultTracking is Argo CD's default: the tracking annotation.
func DefaultTracking() Tracking {
	return Tracking{Mode: TrackingAnnotationMode, LabelKey: InstanceLabel}
}

// withDefaults fills t's empty fields with DefaultTracking's.
func (t Tracking) withDefaults() Tracking {
	if t.Mode == "" {
		t.Mode = TrackingAnnotationMode
	}
	if t.LabelKey == "" {
		t.LabelKey = InstanceLabel
	}
	return t
}

// Track marks obj, which the caller owns, as app's the way t writes:
// the tracking annotation, the instance label, or both.
func Track(obj *unstructured.Unstructured, app string, t Tracking) {
	t = t.withDefaults()
	if t.Mode != TrackingLabelMode {
		ann := obj.GetAnnotations()
		if ann == nil {
			ann = map[string]string{}
		}
		ann[TrackingAnnotation] = TrackingID(app, obj)
		obj.SetAnnotations(ann)
	}
	if t.Mode != TrackingAnnotationMode {
		labels := obj.GetLabels()
		if labels == nil {
			labels = map[string]string{}
		}
		labels[t.LabelKey] = app
		obj.SetLabels(labels)
	}
}

// TrackingID is the value of the tracking annotation for obj owned by app.
func TrackingID(app string, obj *unstructured.Unstructured) string {
	gvk := obj.GroupVersionKind()
	return fmt.Sprintf("%s:%s/%s:%s/%s", app, gvk.Group, gvk.Kind, obj.GetNamespace(), obj.GetName())
}

// OwningApp returns the Application that manages obj, or "" when none does,
// as t reads it. The annotation must describe obj itself: a copy that
// travelled into another object (a template's annotations copied into what
// it creates) does not make that object managed, so it is never pruned.
// Label mode reads the instance label of objects no other object owns (a
// ReplicaSet inherits its Deployment's template labels, and is no app's),
// and the annotation of those without the label: objects written under
// annotation tracking stay their app's after a switch to label tracking
// until a sync writes the label, so the switch prunes and orphans nothing.
// The annotation modes never read the label, which other tools (Helm)
// write too.
func OwningApp(obj *unstructured.Unstructured, t Tracking) string {
	return owningApp(obj.GroupVersionKind(), obj, t)
}

// owningApp is OwningApp for an object of kind gvk known by its metadata.
func owningApp(gvk schema.GroupVersionKind, obj metav1.Object, t Tracking) string {
	if t.Mode == TrackingLabelMode && len(obj.GetOwnerReferences()) == 0 {
		key := t.LabelKey
		if key == "" {
			key = InstanceLabel
		}
		if app := obj.GetLabels()[key]; app != "" {
			return app
		}
	}
	return annotatedApp(gvk, obj)
}

// annotatedApp is the app the tracking annotation of obj, of kind gvk,
// names when it describes obj; "" otherwise.
func annotatedApp(gvk schema.GroupVersionKind, obj metav1.Object) string {
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
