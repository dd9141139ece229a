package health

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// pdbHealth judges a PodDisruptionBudget by its conditions (DisruptionAllowed
// in practice). A budget that allows no disruption because too few pods are
// healthy (InsufficientPods) is still Healthy, as in Argo CD: a budget of
// one pod with minAvailable 1 is a common and valid choice. Any other False
// condition, such as a broken selector (SyncFailed), is Degraded.
func pdbHealth(obj *unstructured.Unstructured) Result {
	result := Result{Status: Progressing, Message: "Waiting for status"}
	for _, c := range conditions(obj.Object) {
		if c.Status == "False" && c.Reason != "InsufficientPods" {
			return Result{Status: Degraded, Message: "PodDisruptionBudget has " + c.Reason}
		}
		result = Result{Status: Healthy, Message: "PodDisruptionBudget has " + c.Reason}
	}
	return result
}
