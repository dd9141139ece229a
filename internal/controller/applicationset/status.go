package applicationset

import (
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/skiffcd/skiff/api/v1alpha1"
)

// Condition reasons, as Argo CD's ApplicationSet controller writes them.
const (
	ReasonErrorOccurred          = "ErrorOccurred"
	ReasonApplicationSetUpToDate = "ApplicationSetUpToDate"
	ReasonParametersGenerated    = "ParametersGenerated"
	ReasonGenerationError        = "ApplicationGenerationFromParamsError"
	ReasonValidationError        = "ApplicationValidationError"
	ReasonCreateApplicationError = "CreateApplicationError"
	ReasonUpdateApplicationError = "UpdateApplicationError"
	ReasonDeleteApplicationError = "DeleteApplicationError"
	ReasonSyncApplicationError   = "SyncApplicationError"
	ReasonApplicationSetModified = "ApplicationSetModified"
	ReasonRolloutComplete        = "ApplicationSetRolloutComplete"
	msgParametersGenerated       = "Successfully generated parameters for all Applications"
	msgAllGenerated              = "All applications have been generated successfully"
	kindApplicationSet           = "ApplicationSet"
	maxConditionMessage          = 1024
)

// failure is what went wrong in a pass; the zero failure is success.
type failure struct {
	reason, message string
	// paramsGenerated: the generators answered (the error came later).
	paramsGenerated bool
}

// passConditions are the conditions a pass writes (Argo CD's
// setApplicationSetStatusCondition): ErrorOccurred, ParametersGenerated
// and ResourcesUpToDate, and under a RollingSync RolloutProgressing
// (rolling, nil otherwise).
func passConditions(f failure, rolling *v1alpha1.ApplicationSetCondition) []v1alpha1.ApplicationSetCondition {
	cond := func(t v1alpha1.ApplicationSetConditionType, s v1alpha1.ApplicationSetConditionStatus, reason, msg string) v1alpha1.ApplicationSetCondition {
		return v1alpha1.ApplicationSetCondition{Type: t, Status: s, Reason: reason, Message: msg}
	}
	const (
		yes = v1alpha1.ApplicationSetConditionStatusTrue
		no  = v1alpha1.ApplicationSetConditionStatusFalse
	)
	var out []v1alpha1.ApplicationSetCondition
	switch {
	case f.reason == "":
		out = []v1alpha1.ApplicationSetCondition{
			cond(v1alpha1.ApplicationSetConditionErrorOccurred, no, ReasonApplicationSetUpToDate, msgParametersGenerated),
			cond(v1alpha1.ApplicationSetConditionParametersGenerated, yes, ReasonParametersGenerated, msgParametersGenerated),
			cond(v1alpha1.ApplicationSetConditionResourcesUpToDate, yes, ReasonApplicationSetUpToDate, msgAllGenerated),
		}
	default:
		msg := truncate(f.message)
		params := cond(v1alpha1.ApplicationSetConditionParametersGenerated, no, ReasonErrorOccurred, msg)
		if f.paramsGenerated {
			params = cond(v1alpha1.ApplicationSetConditionParametersGenerated, yes, ReasonParametersGenerated, msgParametersGenerated)
		}
		out = []v1alpha1.ApplicationSetCondition{
			cond(v1alpha1.ApplicationSetConditionErrorOccurred, yes, f.reason, msg),
			params,
			cond(v1alpha1.ApplicationSetConditionResourcesUpToDate, no, f.reason, msg),
		}
	}
	if rolling != nil {
		out = append(out, *rolling)
	}
	return out
}

// truncate bounds a condition's message: a template over thousands of
// elements may fail the same way for each.
func truncate(msg string) string {
	if len(msg) <= maxConditionMessage {
		return msg
	}
	return msg[:maxConditionMessage] + "..."
}

// mergeConditions sets the conditions of the types in set on existing,
// keeping the lastTransitionTime of one whose status, reason and message
// are unchanged (Argo's SetConditions); RolloutProgressing goes when set
// has none (the set no longer rolls), other types stay. Sorted by type.
func mergeConditions(existing, set []v1alpha1.ApplicationSetCondition, now metav1.Time) []v1alpha1.ApplicationSetCondition {
	var out []v1alpha1.ApplicationSetCondition
	for _, c := range existing {
		if !slices.ContainsFunc(set, func(n v1alpha1.ApplicationSetCondition) bool { return n.Type == c.Type }) &&
			c.Type != v1alpha1.ApplicationSetConditionRolloutProgressing {
			out = append(out, c)
		}
	}
	for _, c := range set {
		c.LastTransitionTime = &now
		for _, e := range existing {
			if e.Type == c.Type && e.Status == c.Status && e.Reason == c.Reason && e.Message == c.Message && e.LastTransitionTime != nil {
				c.LastTransitionTime = e.LastTransitionTime
			}
		}
		out = append(out, c)
	}
	slices.SortFunc(out, func(a, b v1alpha1.ApplicationSetCondition) int {
		return strings.Compare(string(a.Type), string(b.Type))
	})
	return out
}

// resources is status.resources: each of the set's Applications with its
// sync and health (Argo CD's BuildResourceStatus), by name.
func resources(apps []v1alpha1.Application) []v1alpha1.ResourceStatus {
	out := make([]v1alpha1.ResourceStatus, 0, len(apps))
	for i := range apps {
		app := &apps[i]
		out = append(out, v1alpha1.ResourceStatus{
			Group: v1alpha1.GroupVersion.Group, Version: v1alpha1.GroupVersion.Version, Kind: "Application",
			Namespace: app.Namespace, Name: app.Name, Status: app.Status.Sync.Status,
			Health: &v1alpha1.HealthStatus{Status: app.Status.Health.Status, Message: app.Status.Health.Message},
		})
	}
	slices.SortFunc(out, func(a, b v1alpha1.ResourceStatus) int { return strings.Compare(a.Name, b.Name) })
	return out
}
