package health

import (
	"strconv"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/skiffcd/skiff/api/v1alpha1"
)

// workloadGenerationAnnotation records the generation of the Deployment a
// Rollout references through spec.workloadRef.
const workloadGenerationAnnotation = "rollout.argoproj.io/workload-generation"

// rolloutHealth judges a Rollout as Argo CD's Rollout health check does.
//
// Newer Argo Rollouts controllers compute a phase and message themselves; once
// the spec is observed those are used as they are, so that Skiff agrees with
// `kubectl argo rollouts status`. Older status without a phase is judged from
// its conditions, pause state, replica counts and pod hashes.
func rolloutHealth(obj *unstructured.Unstructured) Result {
	o := obj.Object
	status, _ := o["status"].(map[string]any)
	if status == nil || !rolloutGenerationObserved(obj) {
		return Result{Status: Progressing, Message: "Waiting for rollout spec update to be observed"}
	}

	if phase := str(status, "phase"); phase != "" {
		if v1alpha1.RolloutPhase(phase) == v1alpha1.RolloutPhasePaused {
			return Result{Status: Suspended, Message: str(status, "message")}
		}
		return Result{Status: known(phase), Message: str(status, "message")}
	}

	for _, c := range conditions(o) {
		switch {
		case c.Type == string(v1alpha1.InvalidSpec):
			return Result{Status: Degraded, Message: c.Message}
		case c.Type == string(v1alpha1.RolloutProgressing) && (c.Reason == "RolloutAborted" || c.Reason == "ProgressDeadlineExceeded"):
			return Result{Status: Degraded, Message: c.Message}
		}
	}
	// An abort the controller has not explained in a condition yet.
	if flag(status, "abort") {
		return Result{Status: Degraded, Message: "Rollout aborted"}
	}
	if flag(o, "spec", "paused") || len(list(status, "pauseConditions")) > 0 {
		return Result{Status: Suspended, Message: "Rollout is paused"}
	}

	podHash := str(status, "currentPodHash")
	if podHash == "" {
		return Result{Status: Progressing, Message: "Waiting for rollout to finish: status has not been reconciled."}
	}
	desired := numOr(o, 1, "spec", "replicas")
	replicas := numOr(status, 0, "replicas")
	updated := numOr(status, 0, "updatedReplicas")
	available := numOr(status, 0, "availableReplicas")
	if updated < desired {
		return Result{Status: Progressing, Message: "Waiting for roll out to finish: More replicas need to be updated"}
	}
	if available < updated {
		return Result{Status: Progressing, Message: "Waiting for roll out to finish: updated replicas are still becoming available"}
	}

	// Argo Rollouts v0.8 moved status.canary.stableRS to status.stableRS.
	stable := str(status, "stableRS")
	if stable == "" {
		stable = str(status, "canary", "stableRS")
	}
	switch {
	case field(o, "spec", "strategy", "blueGreen") != nil:
		if str(status, "blueGreen", "activeSelector") != podHash {
			return Result{Status: Progressing, Message: "active service cutover pending"}
		}
		// Blue-green does not wait for old replicas: the scale-down delay
		// can be long and they no longer receive traffic. A stable hash
		// behind the active one means post-promotion analysis is running.
		if stable != "" && stable != podHash {
			return Result{Status: Progressing, Message: "waiting for analysis to complete"}
		}
	case field(o, "spec", "strategy", "canary") != nil:
		if replicas > updated {
			return Result{Status: Progressing, Message: "Waiting for roll out to finish: old replicas are pending termination"}
		}
		if stable != podHash {
			return Result{Status: Progressing, Message: "Waiting for rollout to finish steps"}
		}
	}
	return Result{Status: Healthy}
}

// rolloutGenerationObserved compares status.observedGeneration, a string,
// with metadata.generation. Before v0.10 Argo Rollouts stored a pod-template
// hash there (like "75d6d6f664"), which says nothing about generations, so a
// value that is not a number, or is larger than the generation, counts as
// observed. A Rollout that references a Deployment must also have observed
// that Deployment's generation.
func rolloutGenerationObserved(obj *unstructured.Unstructured) bool {
	o := obj.Object
	if observed, ok := num(o, "status", "observedGeneration"); ok && observed < obj.GetGeneration() {
		return false
	}
	if field(o, "spec", "workloadRef") == nil {
		return true
	}
	want, ok := obj.GetAnnotations()[workloadGenerationAnnotation]
	if !ok {
		return true
	}
	wantGen, err := strconv.ParseInt(want, 10, 64)
	if err != nil {
		return true
	}
	got, ok := num(o, "status", "workloadObservedGeneration")
	return ok && got == wantGen
}

// analysisRunHealth maps the run's phase. Inconclusive is Unknown, as in Argo
// CD: the run neither passed nor failed and needs a human to decide.
func analysisRunHealth(obj *unstructured.Unstructured) Result {
	o := obj.Object
	if _, ok := o["status"].(map[string]any); !ok {
		return Result{Status: Progressing, Message: "Waiting for analysis run to finish: status has not been reconciled."}
	}
	msg := str(o, "status", "message")
	or := func(def string) string {
		if msg != "" {
			return msg
		}
		return def
	}
	switch v1alpha1.AnalysisPhase(str(o, "status", "phase")) {
	case "":
		return Result{Status: Progressing, Message: "Waiting for analysis run to finish: status has not been reconciled."}
	case v1alpha1.AnalysisPhasePending, v1alpha1.AnalysisPhaseRunning:
		return Result{Status: Progressing, Message: "Analysis run is running"}
	case v1alpha1.AnalysisPhaseSuccessful:
		return Result{Status: Healthy, Message: or("Analysis run completed successfully")}
	case v1alpha1.AnalysisPhaseFailed:
		return Result{Status: Degraded, Message: or("Analysis run failed")}
	case v1alpha1.AnalysisPhaseError:
		return Result{Status: Degraded, Message: or("Analysis run had an error")}
	case v1alpha1.AnalysisPhaseInconclusive:
		return Result{Status: Unknown, Message: or("Analysis run was inconclusive")}
	}
	return Result{Status: Unknown, Message: msg}
}

// applicationHealth reports a child Application (app of apps) as the health
// that child recorded for itself, for its resource entry and for sync waves.
// A child that has not been assessed yet is Progressing, so that a parent
// sync waits for it. It does not count towards the parent's own health: see
// RollsUp.
func applicationHealth(obj *unstructured.Unstructured) Result {
	o := obj.Object
	s := str(o, "status", "health", "status")
	if s == "" {
		return Result{Status: Progressing, Message: str(o, "status", "health", "message")}
	}
	return Result{Status: known(s), Message: str(o, "status", "health", "message")}
}
