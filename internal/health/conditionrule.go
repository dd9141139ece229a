package health

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// conditionVerdict judges an object by one condition, the way many
// operators report readiness: False is Degraded and True is Healthy, each
// with the condition's message. Without a verdict (no such condition, or
// status Unknown) ok is false and the caller decides what waiting means.
func conditionVerdict(conds []condition, conditionType string) (Result, bool) {
	for _, c := range conds {
		if c.Type != conditionType {
			continue
		}
		switch c.Status {
		case "False":
			return Result{Status: Degraded, Message: c.Message}, true
		case "True":
			return Result{Status: Healthy, Message: c.Message}, true
		}
	}
	return Result{}, false
}

// readyRule is the rule of kinds judged by their Ready condition alone;
// until it says True or False they are Progressing with waiting.
func readyRule(waiting string) rule {
	return conditionRule("Ready", waiting)
}

// conditionRule judges kinds by the condition conditionType alone.
func conditionRule(conditionType, waiting string) rule {
	return func(obj *unstructured.Unstructured) Result {
		if r, ok := conditionVerdict(conditions(obj.Object), conditionType); ok {
			return r
		}
		return Result{Status: Progressing, Message: waiting}
	}
}

// conditionTrue reports whether conds hold a condition of type t with
// status True, and returns it.
func conditionTrue(conds []condition, t string) (condition, bool) {
	for _, c := range conds {
		if c.Type == t && c.Status == "True" {
			return c, true
		}
	}
	return condition{}, false
}
