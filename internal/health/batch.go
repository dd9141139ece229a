package health

import (
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// jobHealth is Degraded once the Job failed, Healthy once it completed,
// Suspended while suspended and Progressing otherwise. The terminal
// conditions win over suspension: a finished Job will not run again.
func jobHealth(obj *unstructured.Unstructured) Result {
	o := obj.Object
	var suspended bool
	var suspendMsg string
	for _, c := range conditions(o) {
		if c.Status != "True" {
			continue
		}
		switch c.Type {
		case "Failed":
			return Result{Status: Degraded, Message: c.Message}
		case "Complete":
			return Result{Status: Healthy, Message: c.Message}
		case "Suspended":
			suspended, suspendMsg = true, c.Message
		}
	}
	if suspended || flag(o, "spec", "suspend") {
		if suspendMsg == "" {
			suspendMsg = "Job is suspended"
		}
		return Result{Status: Suspended, Message: suspendMsg}
	}
	return Result{Status: Progressing}
}

// cronJobHealth is Degraded only when the last scheduled run is known to have
// failed: nothing is running and the last success is older than the last
// schedule. Anything it cannot be sure about (never succeeded yet, a run in
// progress, never scheduled) is Healthy, as in Argo CD, because a CronJob
// that merely waits for its schedule must not hold up a sync.
//
// A suspended CronJob is judged the same way: Argo CD 3.2 does not report
// it Suspended, since that would make its whole Application Suspended.
func cronJobHealth(obj *unstructured.Unstructured) Result {
	o := obj.Object
	if _, ok := o["status"]; !ok {
		return Result{Status: Progressing, Message: "Waiting for CronJob"}
	}
	scheduled, ok := timeField(o, "status", "lastScheduleTime")
	if !ok {
		return Result{Status: Healthy, Message: "CronJob has not been scheduled yet"}
	}
	succeeded, ok := timeField(o, "status", "lastSuccessfulTime")
	if !ok {
		return Result{Status: Healthy, Message: "The CronJob never completed successfully. It may not be healthy"}
	}
	if len(list(o, "status", "active")) > 0 {
		return Result{Status: Healthy, Message: "The job is running. Its last execution may not have been successful"}
	}
	if succeeded.Before(scheduled) {
		return Result{Status: Degraded, Message: "CronJob has not completed its last execution successfully"}
	}
	return Result{Status: Healthy, Message: "CronJob has completed its last execution successfully"}
}

// timeField parses an RFC 3339 timestamp field.
func timeField(o map[string]any, fields ...string) (time.Time, bool) {
	s := str(o, fields...)
	if s == "" {
		return time.Time{}, false
	}
	t, err := time.Parse(time.RFC3339, s)
	return t, err == nil
}
