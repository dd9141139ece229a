package health

import (
	"slices"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// fluxKind says how Argo CD reads one Flux kind's conditions: which
// condition types besides Ready count as successes, and how many successes
// make it Healthy.
type fluxKind struct {
	// successTypes are condition types that count as a success when True.
	successTypes []string
	// appendReasons are condition types whose reason, when True, is added
	// to the message (a source whose artifact is outdated).
	appendReasons []string
	// healthyAt is the number of successes that make the object Healthy.
	healthyAt int
}

var (
	fluxHelmRelease   = fluxKind{successTypes: []string{"Released", "TestSuccess"}, healthyAt: 2}
	fluxKustomization = fluxKind{healthyAt: 1}
	fluxSource        = fluxKind{successTypes: []string{"ArtifactInStorage"}, appendReasons: []string{"ArtifactOutdated"}, healthyAt: 2}
)

// fluxHealth judges a Flux object as Argo CD does: suspended objects are
// Suspended; Ready=Unknown together with Reconciling=True is Progressing;
// enough successes (Ready=True and, for releases and sources, a release or
// a stored artifact) is Healthy; anything else is Degraded. The message is
// the Ready condition's reason.
func fluxHealth(kind fluxKind) rule {
	return func(obj *unstructured.Unstructured) Result {
		o := obj.Object
		if flag(o, "spec", "suspend") {
			return Result{Status: Suspended, Message: obj.GetKind() + " is suspended"}
		}
		if list(o, "status", "conditions") == nil {
			return Result{Status: Progressing, Message: "Status unknown"}
		}
		progressing, succeeded := 0, 0
		message := ""
		for _, c := range conditions(o) {
			switch {
			case c.Type == "Ready":
				switch c.Status {
				case "True":
					succeeded++
				case "Unknown":
					progressing++
				}
				message = c.Reason
			case c.Type == "Reconciling" && c.Status == "True":
				progressing++
			case c.Status == "True" && slices.Contains(kind.appendReasons, c.Type):
				message += " " + c.Reason
			case c.Status == "True" && slices.Contains(kind.successTypes, c.Type):
				succeeded++
			}
		}
		switch {
		case progressing == 2:
			return Result{Status: Progressing, Message: message}
		case succeeded == kind.healthyAt:
			return Result{Status: Healthy, Message: message}
		}
		return Result{Status: Degraded, Message: message}
	}
}

// helmRepositoryHealth is Healthy for OCI repositories, which Flux does not
// reconcile and so never report a status, and otherwise judged as a source.
func helmRepositoryHealth(obj *unstructured.Unstructured) Result {
	o := obj.Object
	if !flag(o, "spec", "suspend") && str(o, "spec", "type") == "oci" {
		return Result{Status: Healthy, Message: "Helm repositories of type 'oci' do not contain any information in the status."}
	}
	return fluxHealth(fluxSource)(obj)
}
