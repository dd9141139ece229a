package health

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// prometheusOperatorHealth judges the Prometheus Operator's Prometheus and
// Alertmanager by their Available condition: True is Healthy; otherwise
// Progressing while pods start (SomePodsNotReady) and Degraded for any other
// reason.
func prometheusOperatorHealth(obj *unstructured.Unstructured) Result {
	c, ok := findCondition(conditions(obj.Object), "Available")
	switch {
	case !ok:
		return Result{Status: Progressing, Message: "Waiting for initialization"}
	case c.Status == "True":
		return Result{Status: Healthy, Message: "All instances are available"}
	case c.Reason == "SomePodsNotReady":
		return Result{Status: Progressing, Message: messageOrReason(c)}
	}
	return Result{Status: Degraded, Message: messageOrReason(c)}
}
