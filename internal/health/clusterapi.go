package health

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// capiClusterHealth judges a Cluster API Cluster: paused is Suspended; then
// the phase (Provisioned is Healthy, Failed Degraded, the rest
// Progressing), overridden by Ready=False, which is Degraded.
func capiClusterHealth(obj *unstructured.Unstructured) Result {
	o := obj.Object
	if flag(o, "spec", "paused") {
		return Result{Status: Suspended, Message: "Cluster is paused"}
	}
	for _, c := range conditions(o) {
		if c.Type == "Ready" && c.Status == "False" {
			return Result{Status: Degraded, Message: c.Message}
		}
	}
	switch str(o, "status", "phase") {
	case "Provisioned":
		return Result{Status: Healthy, Message: "Cluster is running"}
	case "Failed":
		return Result{Status: Degraded}
	}
	return Result{Status: Progressing, Message: "Waiting for clusters"}
}

// capiMachineDeploymentHealth is Healthy once Running with every replica
// updated and ready, and otherwise follows the phase.
func capiMachineDeploymentHealth(obj *unstructured.Unstructured) Result {
	o := obj.Object
	if flag(o, "spec", "paused") {
		return Result{Status: Suspended, Message: "MachineDeployment is paused"}
	}
	replicas, _ := num(o, "status", "replicas")
	updated, _ := num(o, "status", "updatedReplicas")
	ready, _ := num(o, "status", "readyReplicas")
	switch str(o, "status", "phase") {
	case "Running":
		if replicas == updated && replicas == ready {
			return Result{Status: Healthy, Message: "Machines are running under this deployment"}
		}
	case "ScalingUp":
		return Result{Status: Progressing, Message: "Cluster is spawning machines"}
	case "ScalingDown":
		return Result{Status: Progressing, Message: "Cluster is stopping machines"}
	case "Failed":
		return Result{Status: Degraded, Message: "MachineDeployment is failed"}
	}
	return Result{Status: Progressing, Message: "Waiting for machines"}
}

// capiMachineHealth is Healthy once Running and Degraded once Failed; a
// machine that is not running explains itself by its Ready=False message.
func capiMachineHealth(obj *unstructured.Unstructured) Result {
	o := obj.Object
	status := Progressing
	switch str(o, "status", "phase") {
	case "Running":
		return Result{Status: Healthy, Message: "Machine is running"}
	case "Failed":
		status = Degraded
	}
	message := "Condition is unknown"
	for _, c := range conditions(o) {
		if c.Type == "Ready" && c.Status == "False" {
			message = c.Message
			break
		}
	}
	return Result{Status: status, Message: message}
}
