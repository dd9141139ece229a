package health

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// The workload rules follow `kubectl rollout status`, as Argo CD's do, so the
// messages read the same in the UI as on the command line.

// deploymentHealth is Suspended while paused (a paused Deployment never
// finishes, so waiting on it would hang a sync), Degraded once its progress
// deadline passed, and Progressing until every desired replica is updated and
// available and no old replica remains.
func deploymentHealth(obj *unstructured.Unstructured) Result {
	o := obj.Object
	if flag(o, "spec", "paused") {
		return Result{Status: Suspended, Message: "Deployment is paused"}
	}
	if !generationObserved(obj) {
		return Result{Status: Progressing, Message: "Waiting for rollout to finish: observed deployment generation less than desired generation"}
	}
	if c, ok := findCondition(conditions(o), "Progressing"); ok && c.Reason == "ProgressDeadlineExceeded" {
		return Result{Status: Degraded, Message: fmt.Sprintf("Deployment %q exceeded its progress deadline", obj.GetName())}
	}
	desired := numOr(o, 1, "spec", "replicas")
	replicas := numOr(o, 0, "status", "replicas")
	updated := numOr(o, 0, "status", "updatedReplicas")
	available := numOr(o, 0, "status", "availableReplicas")
	switch {
	case updated < desired:
		return Result{Status: Progressing, Message: fmt.Sprintf("Waiting for rollout to finish: %d out of %d new replicas have been updated...", updated, desired)}
	case replicas > updated:
		return Result{Status: Progressing, Message: fmt.Sprintf("Waiting for rollout to finish: %d old replicas are pending termination...", replicas-updated)}
	case available < updated:
		return Result{Status: Progressing, Message: fmt.Sprintf("Waiting for rollout to finish: %d of %d updated replicas are available...", available, updated)}
	}
	return Result{Status: Healthy}
}

// statefulSetHealth waits for the spec to be observed and every replica to be
// ready. A partitioned rolling update is done once the pods above the
// partition are updated; OnDelete is done as soon as pods are ready, since the
// controller will not replace them by itself; otherwise the update revision
// must have become the current one.
//
// Unlike Argo CD, which treats every RollingUpdate with a rollingUpdate block
// as partitioned (the API server defaults partition to 0, so that is nearly
// all of them), only a partition above zero counts here, so an unpartitioned
// update is not reported Healthy before it has replaced every pod.
func statefulSetHealth(obj *unstructured.Unstructured) Result {
	o := obj.Object
	observed, _ := num(o, "status", "observedGeneration")
	if observed == 0 || obj.GetGeneration() > observed {
		return Result{Status: Progressing, Message: "Waiting for statefulset spec update to be observed..."}
	}
	desired := numOr(o, 1, "spec", "replicas")
	ready := numOr(o, 0, "status", "readyReplicas")
	updated := numOr(o, 0, "status", "updatedReplicas")
	if ready < desired {
		return Result{Status: Progressing, Message: fmt.Sprintf("Waiting for %d pods to be ready...", desired-ready)}
	}
	strategy := str(o, "spec", "updateStrategy", "type")
	if partition, ok := num(o, "spec", "updateStrategy", "rollingUpdate", "partition"); ok && partition > 0 && strategy != "OnDelete" {
		if want := desired - partition; updated < want {
			return Result{Status: Progressing, Message: fmt.Sprintf("Waiting for partitioned roll out to finish: %d out of %d new pods have been updated...", updated, want)}
		}
		return Result{Status: Healthy, Message: fmt.Sprintf("partitioned roll out complete: %d new pods have been updated...", updated)}
	}
	if strategy == "OnDelete" {
		return Result{Status: Healthy, Message: fmt.Sprintf("statefulset has %d ready pods", ready)}
	}
	current := str(o, "status", "currentRevision")
	update := str(o, "status", "updateRevision")
	if update != current {
		return Result{Status: Progressing, Message: fmt.Sprintf("waiting for statefulset rolling update to complete %d pods at revision %s...", updated, update)}
	}
	return Result{Status: Healthy, Message: fmt.Sprintf("statefulset rolling update complete %d pods at revision %s...", numOr(o, 0, "status", "currentReplicas"), current)}
}

// daemonSetHealth is Progressing until every scheduled pod is updated and
// available. OnDelete is Healthy once observed, because updating is left to
// whoever deletes the old pods.
func daemonSetHealth(obj *unstructured.Unstructured) Result {
	o := obj.Object
	if !generationObserved(obj) {
		return Result{Status: Progressing, Message: "Waiting for rollout to finish: observed daemon set generation less than desired generation"}
	}
	desired := numOr(o, 0, "status", "desiredNumberScheduled")
	updated := numOr(o, 0, "status", "updatedNumberScheduled")
	available := numOr(o, 0, "status", "numberAvailable")
	if str(o, "spec", "updateStrategy", "type") == "OnDelete" {
		return Result{Status: Healthy, Message: fmt.Sprintf("daemon set %d out of %d new pods have been updated", updated, desired)}
	}
	switch {
	case updated < desired:
		return Result{Status: Progressing, Message: fmt.Sprintf("Waiting for daemon set %q rollout to finish: %d out of %d new pods have been updated...", obj.GetName(), updated, desired)}
	case available < desired:
		return Result{Status: Progressing, Message: fmt.Sprintf("Waiting for daemon set %q rollout to finish: %d of %d updated pods are available...", obj.GetName(), available, desired)}
	}
	return Result{Status: Healthy}
}

// replicaSetHealth is Degraded when the controller cannot create pods (quota,
// admission), since waiting will not fix that, and Progressing until the
// desired replicas are available.
func replicaSetHealth(obj *unstructured.Unstructured) Result {
	o := obj.Object
	if !generationObserved(obj) {
		return Result{Status: Progressing, Message: "Waiting for rollout to finish: observed replica set generation less than desired generation"}
	}
	if c, ok := findCondition(conditions(o), "ReplicaFailure"); ok && c.Status == "True" {
		return Result{Status: Degraded, Message: c.Message}
	}
	desired := numOr(o, 1, "spec", "replicas")
	available := numOr(o, 0, "status", "availableReplicas")
	if available < desired {
		return Result{Status: Progressing, Message: fmt.Sprintf("Waiting for rollout to finish: %d out of %d new replicas are available...", available, desired)}
	}
	return Result{Status: Healthy}
}
