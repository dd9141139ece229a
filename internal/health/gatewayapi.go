package health

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// gatewayConditionsHealth judges one set of Gateway API conditions:
// ResolvedRefs=False or Accepted=False is Degraded, Programmed other than
// True is Progressing with programming. ok is false when neither applies.
func gatewayConditionsHealth(conds []condition, prefix, programming string) (Result, bool) {
	for _, t := range []string{"ResolvedRefs", "Accepted"} {
		for _, c := range conds {
			if c.Type == t && c.Status == "False" {
				msg := c.Message
				if msg == "" {
					msg = "Failed condition: " + t
				}
				return Result{Status: Degraded, Message: prefix + msg}, true
			}
		}
	}
	for _, c := range conds {
		if c.Type == "Programmed" && c.Status != "True" {
			msg := c.Message
			if msg == "" {
				msg = programming
			}
			return Result{Status: Progressing, Message: prefix + msg}, true
		}
	}
	return Result{}, false
}

// gatewayHealth judges a Gateway by its own conditions, then by each
// listener's; it is Healthy once it or its listeners reported anything
// without a problem.
func gatewayHealth(obj *unstructured.Unstructured) Result {
	o := obj.Object
	if r, ok := gatewayConditionsHealth(conditions(o), "", "Gateway is still being programmed"); ok {
		return r
	}
	listeners := list(o, "status", "listeners")
	for _, item := range listeners {
		l, ok := item.(map[string]any)
		if !ok {
			continue
		}
		if r, ok := gatewayConditionsHealth(conditionsIn(l), "Listener: ", "Listener is still being programmed"); ok {
			return r
		}
	}
	if list(o, "status", "conditions") != nil || len(listeners) > 0 {
		return Result{Status: Healthy, Message: "Gateway is healthy"}
	}
	return Result{Status: Progressing, Message: "Waiting for Gateway status"}
}

// routeHealth judges an HTTPRoute or GRPCRoute by the conditions each parent
// Gateway reported for it, ignoring parents that have not seen the route's
// current generation yet. Argo CD's GRPCRoute rule reads status.parents as
// if it were one object, so it never judges a real GRPCRoute; both route
// kinds share this rule here, since their status has the same shape.
func routeHealth(obj *unstructured.Unstructured) Result {
	o := obj.Object
	kind := obj.GetKind()
	observed := false
	for _, item := range list(o, "status", "parents") {
		p, ok := item.(map[string]any)
		if !ok {
			continue
		}
		if !parentObservedGeneration(obj, p) {
			continue
		}
		observed = true
		prefix := "Parent " + str(p, "parentRef", "name") + ": "
		if r, ok := gatewayConditionsHealth(conditionsIn(p), prefix, "Route is still being programmed"); ok {
			return r
		}
	}
	if observed {
		return Result{Status: Healthy, Message: kind + " is healthy"}
	}
	return Result{Status: Progressing, Message: "Waiting for " + kind + " status"}
}

// parentObservedGeneration reports whether a parent's conditions describe
// the route's current generation; a route without a generation accepts any
// parent that reported conditions.
func parentObservedGeneration(obj *unstructured.Unstructured, parent map[string]any) bool {
	conds := list(parent, "conditions")
	if obj.GetGeneration() == 0 {
		return len(conds) > 0
	}
	for _, item := range conds {
		if c, ok := item.(map[string]any); ok {
			if g, ok := num(c, "observedGeneration"); ok && g == obj.GetGeneration() {
				return true
			}
		}
	}
	return false
}
