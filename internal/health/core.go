package health

import (
	"encoding/json"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// serviceHealth waits for a LoadBalancer Service to get an address, since
// until then nothing outside the cluster can reach it. Other types are
// usable as soon as they exist.
func serviceHealth(obj *unstructured.Unstructured) Result {
	o := obj.Object
	if str(o, "spec", "type") == "LoadBalancer" && len(list(o, "status", "loadBalancer", "ingress")) == 0 {
		return Result{Status: Progressing}
	}
	return Result{Status: Healthy}
}

// ingressHealth waits for the ingress controller to publish an address, as
// Argo CD does. Controllers that never publish one keep the Ingress
// Progressing; that is Argo CD's behaviour too.
func ingressHealth(obj *unstructured.Unstructured) Result {
	if len(list(obj.Object, "status", "loadBalancer", "ingress")) == 0 {
		return Result{Status: Progressing}
	}
	return Result{Status: Healthy}
}

// pvcHealth maps the claim's phase: Lost means its volume is gone.
func pvcHealth(obj *unstructured.Unstructured) Result {
	switch str(obj.Object, "status", "phase") {
	case "Bound":
		return Result{Status: Healthy}
	case "Pending":
		return Result{Status: Progressing}
	case "Lost":
		return Result{Status: Degraded}
	}
	return Result{Status: Unknown}
}

// apiServiceHealth follows the Available condition. An unavailable
// APIService is Progressing, as in Argo CD: its backing Service is usually
// still starting, and the aggregator retries by itself.
func apiServiceHealth(obj *unstructured.Unstructured) Result {
	c, ok := findCondition(conditions(obj.Object), "Available")
	if !ok {
		return Result{Status: Progressing, Message: "Waiting to be processed"}
	}
	msg := fmt.Sprintf("%s: %s", c.Reason, c.Message)
	if c.Status == "True" {
		return Result{Status: Healthy, Message: msg}
	}
	return Result{Status: Progressing, Message: msg}
}

// hpaConditionsAnnotation is where autoscaling/v1 serves the conditions that
// v2 has in status.conditions.
const hpaConditionsAnnotation = "autoscaling.alpha.kubernetes.io/conditions"

// hpaHealth is Degraded when the autoscaler cannot read or change the scale
// of its target, or cannot compute metrics, because it then silently stops
// scaling. It is Healthy only once AbleToScale or ScalingLimited is True, as
// in Argo CD, and Progressing until then.
//
// Argo CD only recognises a few reasons and takes the first matching
// condition; here any AbleToScale=False and any ScalingActive=False other
// than ScalingDisabled (a target scaled to zero on purpose) is Degraded.
func hpaHealth(obj *unstructured.Unstructured) Result {
	conds := conditions(obj.Object)
	if len(conds) == 0 {
		if raw, ok := obj.GetAnnotations()[hpaConditionsAnnotation]; ok {
			if err := json.Unmarshal([]byte(raw), &conds); err != nil {
				return Result{Status: Unknown, Message: fmt.Sprintf("cannot read %s annotation: %v", hpaConditionsAnnotation, err)}
			}
		}
	}
	for _, c := range conds {
		if c.Status != "False" {
			continue
		}
		if c.Type == "AbleToScale" || (c.Type == "ScalingActive" && c.Reason != "ScalingDisabled") {
			return Result{Status: Degraded, Message: c.Message}
		}
	}
	// Only a condition saying the autoscaler can act makes it Healthy, as
	// in Argo CD; until one is reported it has not acted yet.
	for _, c := range conds {
		if c.Status == "True" && (c.Type == "AbleToScale" || c.Type == "ScalingLimited") {
			return Result{Status: Healthy, Message: c.Message}
		}
	}
	return Result{Status: Progressing, Message: "Waiting to Autoscale"}
}
