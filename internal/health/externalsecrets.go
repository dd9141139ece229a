package health

import (
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// externalSecretHealth follows the Ready condition. With refreshPolicy
// OnChange the operator only syncs when the spec changes, so a Ready
// condition older than the last refresh describes an earlier spec and is
// not trusted yet.
func externalSecretHealth(obj *unstructured.Unstructured) Result {
	o := obj.Object
	onChange := str(o, "spec", "refreshPolicy") == "OnChange"
	refreshed, _ := timeField(o, "status", "refreshTime")
	for _, item := range list(o, "status", "conditions") {
		m, ok := item.(map[string]any)
		if !ok || str(m, "type") != "Ready" {
			continue
		}
		if onChange {
			if changed, ok := timeField(m, "lastTransitionTime"); !ok || changed.Before(refreshed) {
				continue
			}
		}
		switch str(m, "status") {
		case "False":
			return Result{Status: Degraded, Message: str(m, "message")}
		case "True":
			return Result{Status: Healthy, Message: str(m, "message")}
		}
	}
	return Result{Status: Progressing, Message: "Waiting for ExternalSecret"}
}

// Legacy kubernetes-client.io ExternalSecrets (godaddy's
// kubernetes-external-secrets) report a single status.status string:
// "SUCCESS", or "ERROR, " followed by the backend's error.
const (
	legacySuccess     = "SUCCESS"
	legacyErrorPrefix = "ERROR"
)

// legacyExternalSecretHealth is Degraded with the backend's error when the
// last poll failed, Healthy after a successful one, and Progressing until the
// controller has polled the current spec.
func legacyExternalSecretHealth(obj *unstructured.Unstructured) Result {
	o := obj.Object
	if observed, ok := num(o, "status", "observedGeneration"); ok && observed < obj.GetGeneration() {
		return Result{Status: Progressing, Message: "Waiting for ExternalSecret"}
	}
	status := str(o, "status", "status")
	switch {
	case status == legacySuccess:
		return Result{Status: Healthy}
	case strings.HasPrefix(status, legacyErrorPrefix):
		msg := strings.TrimSpace(strings.TrimPrefix(strings.TrimPrefix(status, legacyErrorPrefix), ","))
		return Result{Status: Degraded, Message: msg}
	}
	return Result{Status: Progressing, Message: "Waiting for ExternalSecret"}
}

// sealedSecretHealth follows the Synced condition the sealed-secrets
// controller sets once it has (or has failed to) decrypt the secret.
var sealedSecretHealth = conditionRule("Synced", "Waiting for Sealed Secret to be decrypted")
