package health

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// ignoreRestartPolicyAnnotation marks a pod whose restartPolicy Never or
// OnFailure does not make it a finite one: operators (KubeVirt's
// virt-launcher, database operators) run long-lived pods that way. Such a
// running pod is judged by readiness, as Argo CD does when the annotation is
// present, whatever its value.
const ignoreRestartPolicyAnnotation = "argocd.argoproj.io/ignore-restart-policy"

func ignoresRestartPolicy(obj *unstructured.Unstructured) bool {
	_, ok := obj.GetAnnotations()[ignoreRestartPolicyAnnotation]
	return ok
}

// podHealth judges a pod by its phase, except that a long-running pod
// (restartPolicy Always) whose containers are stuck waiting on an error is
// Degraded whatever its phase: an ImagePullBackOff pod stays Pending forever.
//
// Pods that run to completion (Never, OnFailure) are typically sync hooks.
// They are not marked Degraded while waiting, because a hook reported failed
// early would end the sync, and the hook would then still run later once the
// error cleared. A running one is Progressing rather than Healthy: it is not
// done yet.
func podHealth(obj *unstructured.Unstructured) Result {
	o := obj.Object
	policy := str(o, "spec", "restartPolicy")
	if policy == "" {
		policy = "Always"
	}
	message := str(o, "status", "message")
	initStatuses := containerStatuses(o, "initContainerStatuses")
	statuses := containerStatuses(o, "containerStatuses")

	if policy == "Always" {
		var msgs []string
		for _, c := range append(initStatuses, statuses...) {
			reason := str(c, "state", "waiting", "reason")
			if waitingOnError(reason) {
				msg := str(c, "state", "waiting", "message")
				if msg == "" {
					msg = fmt.Sprintf("container %q is waiting: %s", str(c, "name"), reason)
				}
				msgs = append(msgs, msg)
			}
		}
		if len(msgs) > 0 {
			return Result{Status: Degraded, Message: strings.Join(msgs, ", ")}
		}
	}

	switch str(o, "status", "phase") {
	case "Pending":
		return Result{Status: Progressing, Message: message}
	case "Succeeded":
		return Result{Status: Healthy, Message: message}
	case "Failed":
		if message != "" {
			return Result{Status: Degraded, Message: message}
		}
		for _, c := range append(initStatuses, statuses...) {
			if msg := failure(c); msg != "" {
				return Result{Status: Degraded, Message: msg}
			}
		}
		return Result{Status: Degraded}
	case "Running":
		if policy != "Always" && !ignoresRestartPolicy(obj) {
			return Result{Status: Progressing, Message: message}
		}
		if podReady(o) {
			return Result{Status: Healthy, Message: message}
		}
		// Not ready after a container already died: it is crash-looping
		// between back-offs rather than starting up.
		for _, c := range statuses {
			if field(c, "lastState", "terminated") != nil {
				if message == "" {
					message = fmt.Sprintf("container %q restarted %d times", str(c, "name"), numOr(c, 0, "restartCount"))
				}
				return Result{Status: Degraded, Message: message}
			}
		}
		return Result{Status: Progressing, Message: message}
	}
	return Result{Status: Unknown, Message: message}
}

// waitingOnError reports whether a waiting reason is an error the kubelet
// will not get past by itself: ErrImagePull, CreateContainerConfigError,
// CrashLoopBackOff, ImagePullBackOff, InvalidImageName and the like, as
// opposed to ContainerCreating or PodInitializing.
func waitingOnError(reason string) bool {
	return strings.HasPrefix(reason, "Err") ||
		strings.HasSuffix(reason, "Error") ||
		strings.HasSuffix(reason, "BackOff") ||
		reason == "InvalidImageName"
}

// failure explains why a terminated container failed, or returns "".
func failure(c map[string]any) string {
	t, ok := field(c, "state", "terminated").(map[string]any)
	if !ok {
		return ""
	}
	if msg := str(t, "message"); msg != "" {
		return msg
	}
	if reason := str(t, "reason"); reason == "OOMKilled" {
		return reason
	}
	if code := numOr(t, 0, "exitCode"); code != 0 {
		return fmt.Sprintf("container %q failed with exit code %d", str(c, "name"), code)
	}
	return ""
}

// podReady reads the Ready condition, which the kubelet sets once every
// container is ready and readiness gates pass.
func podReady(o map[string]any) bool {
	c, ok := findCondition(conditions(o), "Ready")
	return ok && c.Status == "True"
}

func containerStatuses(o map[string]any, name string) []map[string]any {
	var out []map[string]any
	for _, item := range list(o, "status", name) {
		if m, ok := item.(map[string]any); ok {
			out = append(out, m)
		}
	}
	return out
}
