package health

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// genericHealth judges kinds without a rule of their own from the status
// conventions most controllers follow (the ones kstatus reads): an
// unobserved generation or Reconciling=True is Progressing, Stalled=True or
// Ready/Available=False is Degraded. An object without status (a ConfigMap,
// a Role) is Healthy: there is nothing to wait for.
func genericHealth(obj *unstructured.Unstructured) Result {
	o := obj.Object
	if _, ok := o["status"]; !ok {
		return Result{Status: Healthy}
	}
	if observed, ok := num(o, "status", "observedGeneration"); ok && observed < obj.GetGeneration() {
		return Result{Status: Progressing, Message: "Waiting for spec update to be observed"}
	}
	conds := conditions(o)
	if c, ok := findCondition(conds, "Stalled"); ok && c.Status == "True" {
		return Result{Status: Degraded, Message: c.text()}
	}
	if c, ok := findCondition(conds, "Reconciling"); ok && c.Status == "True" {
		return Result{Status: Progressing, Message: c.text()}
	}
	for _, t := range []string{"Ready", "Available"} {
		c, ok := findCondition(conds, t)
		if !ok {
			continue
		}
		switch c.Status {
		case "False":
			return Result{Status: Degraded, Message: c.text()}
		case "True":
			return Result{Status: Healthy, Message: c.Message}
		default:
			return Result{Status: Progressing, Message: c.text()}
		}
	}
	return Result{Status: Healthy}
}
