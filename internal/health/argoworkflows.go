package health

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// workflowHealth maps an Argo Workflow's phase: a workflow that has not
// finished is Progressing, so that a sync wave waits for it.
func workflowHealth(obj *unstructured.Unstructured) Result {
	o := obj.Object
	message := str(o, "status", "message")
	switch str(o, "status", "phase") {
	case "", "Pending", "Running":
		return Result{Status: Progressing, Message: message}
	case "Succeeded":
		return Result{Status: Healthy, Message: message}
	case "Failed", "Error":
		return Result{Status: Degraded, Message: message}
	}
	return Result{Status: Unknown, Message: message}
}

// cronWorkflowHealth is Degraded when the schedule cannot submit workflows
// (a spec or submission error) and Healthy otherwise: like a CronJob, it
// mostly waits for its schedule.
func cronWorkflowHealth(obj *unstructured.Unstructured) Result {
	for _, c := range conditions(obj.Object) {
		if c.Status != "True" {
			continue
		}
		switch c.Type {
		case "SpecError", "SubmissionError":
			return Result{Status: Degraded, Message: c.Message}
		case "Completed":
			return Result{Status: Healthy, Message: c.Message}
		}
	}
	return Result{Status: Healthy, Message: "CronWorkflow is healthy."}
}

// applicationSetHealth is Degraded when the generator or the template
// failed, or the generated Applications could not be brought up to date;
// Progressing during a progressive sync; Healthy once its Applications are
// up to date.
func applicationSetHealth(obj *unstructured.Unstructured) Result {
	conds := conditions(obj.Object)
	if c, ok := conditionTrue(conds, "ErrorOccurred"); ok {
		return Result{Status: Degraded, Message: c.Message}
	}
	for _, c := range conds {
		if c.Type == "ResourcesUpToDate" && c.Status == "False" {
			return Result{Status: Degraded, Message: c.Message}
		}
	}
	if c, ok := conditionTrue(conds, "RolloutProgressing"); ok {
		return Result{Status: Progressing, Message: c.Message}
	}
	if c, ok := conditionTrue(conds, "ResourcesUpToDate"); ok {
		return Result{Status: Healthy, Message: c.Message}
	}
	return Result{Status: Progressing, Message: "Waiting for the status to be reported"}
}
