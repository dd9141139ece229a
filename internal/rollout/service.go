package rollout

import "k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

// AnnotationManagedBy marks a Service whose selector a Rollout steers: the
// active and preview Services of a blue-green Rollout, the stable and
// canary Services of a canary one. Argo Rollouts writes the same.
const AnnotationManagedBy = "argo-rollouts.argoproj.io/managed-by-rollouts"

// KeepServiceSelector copies into desired the pod-template hash that the
// live Service's selector carries, when a Rollout steers that Service and
// desired leaves the hash out. The hash is the Rollout's to choose: git
// does not name it, and a Service's selector is replaced whole by a
// server-side apply, so applying git's selector as it is would send the
// Service's traffic to every ReplicaSet until the Rollout wrote it back,
// and a comparison would find the app OutOfSync after every switch.
func KeepServiceSelector(desired, live *unstructured.Unstructured) {
	if desired == nil || live == nil || !isCoreService(desired) || !isCoreService(live) {
		return
	}
	if live.GetAnnotations()[AnnotationManagedBy] == "" {
		return
	}
	hash, found, _ := unstructured.NestedString(live.Object, "spec", "selector", PodTemplateHashLabel)
	if !found || hash == "" {
		return
	}
	selector, _, _ := unstructured.NestedStringMap(desired.Object, "spec", "selector")
	if len(selector) == 0 {
		return
	}
	if _, named := selector[PodTemplateHashLabel]; named {
		return
	}
	selector[PodTemplateHashLabel] = hash
	_ = unstructured.SetNestedStringMap(desired.Object, selector, "spec", "selector")
}

func isCoreService(o *unstructured.Unstructured) bool {
	gvk := o.GroupVersionKind()
	return gvk.Group == "" && gvk.Kind == "Service"
}
