package health

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// eventBusHealth follows the Deployed condition, as Argo CD does; a
// condition without a message is described by its reason.
func eventBusHealth(obj *unstructured.Unstructured) Result {
	return argoEventsHealth(obj, nil)
}

// Argo CD has no rule for Sensors and EventSources, so they showed Healthy
// whatever their state. Skiff judges them like the EventBus, and also
// reports the conditions the Argo Events controller sets when the spec is
// unusable (no dependencies or triggers, no sources) as Degraded.
func sensorHealth(obj *unstructured.Unstructured) Result {
	return argoEventsHealth(obj, []string{"DependenciesProvided", "TriggersProvided"})
}

func eventSourceHealth(obj *unstructured.Unstructured) Result {
	return argoEventsHealth(obj, []string{"SourcesProvided"})
}

// argoEventsHealth is Degraded when one of specConditions is False, and
// otherwise follows Deployed.
func argoEventsHealth(obj *unstructured.Unstructured, specConditions []string) Result {
	conds := conditions(obj.Object)
	for _, t := range specConditions {
		if c, ok := findCondition(conds, t); ok && c.Status == "False" {
			return Result{Status: Degraded, Message: messageOrReason(c)}
		}
	}
	if c, ok := findCondition(conds, "Deployed"); ok {
		switch c.Status {
		case "False":
			return Result{Status: Degraded, Message: messageOrReason(c)}
		case "True":
			return Result{Status: Healthy, Message: messageOrReason(c)}
		}
	}
	return Result{Status: Progressing, Message: "Waiting for initialization"}
}

// messageOrReason describes a condition by its message, or its reason when
// it has none.
func messageOrReason(c condition) string {
	if c.Message != "" {
		return c.Message
	}
	return c.Reason
}
