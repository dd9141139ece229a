package health

import (
	"slices"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Crossplane kinds that never report conditions: they are configuration,
// Healthy as soon as they exist.
var (
	crossplaneNoStatusKinds = []string{"Composition", "CompositionRevision", "DeploymentRuntimeConfig", "ClusterProviderConfig", "ProviderConfig", "ProviderConfigUsage", "ControllerConfig"}
	upboundNoStatusKinds    = []string{"ClusterProviderConfig", "ProviderConfig", "ProviderConfigUsage"}

	// Condition types that say a Crossplane object is up: managed
	// resources and claims are Ready, packages Healthy or Installed...
	crossplaneHealthyTypes = []string{"Ready", "Healthy", "Offered", "Established", "ValidPipeline", "RevisionHealthy"}
	upboundHealthyTypes    = []string{"Ready"}
)

// crossplaneHealth judges every kind in a *.crossplane.io group, as Argo
// CD's wildcard rule does, and Crossplane claims and composite resources,
// which live in the user's own API groups (see isCrossplaneComposite).
func crossplaneHealth(obj *unstructured.Unstructured) Result {
	return crossplaneLikeHealth(obj, crossplaneNoStatusKinds, crossplaneHealthyTypes)
}

// upboundHealth judges the Upbound providers' managed resources
// (*.upbound.io), which report only Ready among the healthy types.
func upboundHealth(obj *unstructured.Unstructured) Result {
	return crossplaneLikeHealth(obj, upboundNoStatusKinds, upboundHealthyTypes)
}

// crossplaneLikeHealth is Degraded when the provider failed to apply the
// resource (Synced=False) or an asynchronous operation failed, Healthy when
// one of healthyTypes is True, and Progressing while provisioning. An
// object without status is Healthy, as in Argo CD.
func crossplaneLikeHealth(obj *unstructured.Unstructured, noStatusKinds, healthyTypes []string) Result {
	o := obj.Object
	provisioning := Result{Status: Progressing, Message: "Provisioning ..."}
	status, _ := o["status"].(map[string]any)
	if status == nil {
		return Result{Status: Healthy, Message: "Resource is up-to-date."}
	}
	if len(status) == 0 && slices.Contains(noStatusKinds, obj.GetKind()) {
		return Result{Status: Healthy, Message: "Resource is up-to-date."}
	}
	if status["conditions"] == nil {
		if (obj.GetKind() == "ProviderConfig" || obj.GetKind() == "ClusterProviderConfig") && status["users"] != nil {
			return Result{Status: Healthy, Message: "Resource is in use."}
		}
		return provisioning
	}
	// A failure wins over readiness wherever it is in the list: Argo CD's
	// Crossplane rule takes the first condition that decides, so a Ready
	// listed before Synced=False hid the failure there.
	conds := conditions(o)
	for _, c := range conds {
		if (c.Type == "LastAsyncOperation" || c.Type == "Synced") && c.Status == "False" {
			return Result{Status: Degraded, Message: c.Message}
		}
	}
	for _, c := range conds {
		if slices.Contains(healthyTypes, c.Type) && c.Status == "True" {
			return Result{Status: Healthy, Message: "Resource is up-to-date."}
		}
	}
	return provisioning
}

// compositeSpecFields are spec fields only Crossplane puts on claims and
// composite resources: the composition chosen for them (v1), or the
// spec.crossplane block that holds it since Crossplane v2.
var compositeSpecFields = []string{"compositionRef", "compositionSelector", "compositionRevisionRef", "crossplane"}

// isCrossplaneComposite reports whether obj is a Crossplane claim or
// composite resource. Argo CD selects Crossplane kinds by group only, so it
// leaves these to users' own health scripts; without one the generic rule
// would call a claim that is still being created (Ready=False, reason
// Creating) Degraded and miss a failed composition (Synced=False).
func isCrossplaneComposite(obj *unstructured.Unstructured) bool {
	spec, _ := obj.Object["spec"].(map[string]any)
	for _, f := range compositeSpecFields {
		if _, ok := spec[f].(map[string]any); ok {
			return true
		}
	}
	return false
}
