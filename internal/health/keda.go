package health

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// kedaHealth judges KEDA's ScaledObject and ScaledJob. Every condition is
// read and the last one that matters supplies the message: Ready=False, or
// a condition in degradedWhenTrue, is Degraded; Ready=True is Healthy,
// or Suspended when autoscaling is Paused; anything else is Progressing with
// waiting.
func kedaHealth(degradedWhen func(condition) bool, waiting string) rule {
	return func(obj *unstructured.Unstructured) Result {
		var healthy, degraded, paused bool
		message := ""
		for _, c := range conditions(obj.Object) {
			switch {
			case c.Type == "Ready" && c.Status == "False", degradedWhen(c):
				message, degraded = c.Message, true
			case c.Type == "Ready" && c.Status == "True":
				message, healthy = c.Message, true
			case c.Type == "Paused" && c.Status == "True":
				message, paused = c.Message, true
			}
		}
		switch {
		case degraded:
			return Result{Status: Degraded, Message: message}
		case healthy && paused:
			return Result{Status: Suspended, Message: message}
		case healthy:
			return Result{Status: Healthy, Message: message}
		}
		return Result{Status: Progressing, Message: waiting}
	}
}

// A ScaledObject that fell back to its fallback replicas cannot read its
// scaler: it no longer follows the load.
var scaledObjectHealth = kedaHealth(func(c condition) bool {
	return c.Type == "Fallback" && c.Status == "True"
}, "Creating HorizontalPodAutoscaler Object")

// A ScaledJob whose readiness is Unknown could not check its scaler.
var scaledJobHealth = kedaHealth(func(c condition) bool {
	return c.Type == "Ready" && c.Status == "Unknown"
}, "Waiting for ScaledJob")
