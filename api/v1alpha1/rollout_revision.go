package v1alpha1

import (
	"strconv"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// AnnotationRolloutRevision numbers the revisions of a Rollout on its
// ReplicaSets and AnalysisRuns, as Argo Rollouts writes it and its tools
// (the kubectl plugin, `skiff rollout`, the API server) read it.
const AnnotationRolloutRevision = "rollout.argoproj.io/revision"

// RolloutRevision is the revision AnnotationRolloutRevision gives obj, 0
// when it has none or it is not a number (ParseInt caps one past int64).
func RolloutRevision(obj metav1.Object) int64 {
	v, _ := strconv.ParseInt(obj.GetAnnotations()[AnnotationRolloutRevision], 10, 64)
	return v
}
