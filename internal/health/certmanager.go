package health

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// certificateHealth is Progressing while cert-manager issues the
// certificate (Issuing=True), even when the previous one is still Ready, so
// that a sync wave waits for the renewed certificate. Otherwise it follows
// Ready.
func certificateHealth(obj *unstructured.Unstructured) Result {
	conds := conditions(obj.Object)
	if c, ok := conditionTrue(conds, "Issuing"); ok {
		return Result{Status: Progressing, Message: c.Message}
	}
	if r, ok := conditionVerdict(conds, "Ready"); ok {
		return r
	}
	return Result{Status: Progressing, Message: "Waiting for certificate"}
}

// certificateRequestHealth is Degraded once an approver denied the request
// or cert-manager found it invalid: neither is retried. Ready=False is
// Progressing only with reason Pending (the issuer has not answered yet).
func certificateRequestHealth(obj *unstructured.Unstructured) Result {
	conds := conditions(obj.Object)
	for _, t := range []string{"Denied", "InvalidRequest"} {
		if c, ok := conditionTrue(conds, t); ok {
			return Result{Status: Degraded, Message: c.Message}
		}
	}
	if c, ok := findCondition(conds, "Ready"); ok {
		switch {
		case c.Status == "True":
			return Result{Status: Healthy, Message: c.Message}
		case c.Reason == "Pending":
			return Result{Status: Progressing, Message: c.Message}
		}
		return Result{Status: Degraded, Message: c.Message}
	}
	return Result{Status: Progressing, Message: "Waiting for certificate request"}
}
