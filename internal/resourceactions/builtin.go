package resourceactions

import (
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/skiffcd/skiff/api/v1alpha1"
	"github.com/skiffcd/skiff/internal/opserr"
	"github.com/skiffcd/skiff/internal/rolloutops"
)

// The annotations the built-in actions write, kubectl's.
const (
	// RestartedAtAnnotation on a pod template makes its controller replace
	// the pods, as `kubectl rollout restart` does.
	RestartedAtAnnotation = "kubectl.kubernetes.io/restartedAt"
	// InstantiateAnnotation marks a Job made by hand from a CronJob, as
	// `kubectl create job --from=cronjob/...` marks it.
	InstantiateAnnotation = "cronjob.kubernetes.io/instantiate"
)

var (
	gkDeployment  = schema.GroupKind{Group: "apps", Kind: "Deployment"}
	gkStatefulSet = schema.GroupKind{Group: "apps", Kind: "StatefulSet"}
	gkDaemonSet   = schema.GroupKind{Group: "apps", Kind: "DaemonSet"}
	gkCronJob     = schema.GroupKind{Group: "batch", Kind: "CronJob"}
	gkRollout     = schema.GroupKind{Group: v1alpha1.GroupVersion.Group, Kind: "Rollout"}
)

// rolloutOps maps Argo CD's Rollout action names to the kubectl plugin's
// operations: resume is the plugin's promote of a paused Rollout.
var rolloutOps = map[string]rolloutops.Op{
	"abort":        rolloutops.Abort,
	"pause":        rolloutops.Pause,
	"promote-full": rolloutops.PromoteFull,
	"restart":      rolloutops.Restart,
	"resume":       rolloutops.Promote,
	"retry":        rolloutops.Retry,
}

// builtinActions are the actions Argo CD ships for obj's kind, with its
// conditions for disabling them.
func builtinActions(obj *unstructured.Unstructured) []Action {
	switch GroupKind(obj) {
	case gkDeployment:
		paused, _, _ := unstructured.NestedBool(obj.Object, "spec", "paused")
		return []Action{{Name: "restart"}, {Name: "pause", Disabled: paused}, {Name: "resume", Disabled: !paused}, scaleAction(obj)}
	case gkStatefulSet:
		return []Action{{Name: "restart"}, scaleAction(obj)}
	case gkDaemonSet:
		return []Action{{Name: "restart"}}
	case gkCronJob:
		actions := []Action{{Name: "create-job", IconClass: "fa fa-fw fa-plus", DisplayName: "Create Job"}}
		// Argo CD offers one of the two, whichever applies.
		if suspended, _, _ := unstructured.NestedBool(obj.Object, "spec", "suspend"); suspended {
			return append(actions, Action{Name: "resume", IconClass: "fa fa-fw fa-play"})
		}
		return append(actions, Action{Name: "suspend", IconClass: "fa fa-fw fa-pause"})
	case gkRollout:
		return rolloutActions(obj)
	}
	return nil
}

func scaleAction(obj *unstructured.Unstructured) Action {
	replicas, found, _ := unstructured.NestedInt64(obj.Object, "spec", "replicas")
	if !found {
		replicas = 1 // the API server's default
	}
	return Action{Name: "scale", Params: []Param{{Name: "replicas", Type: "number", Default: strconv.FormatInt(replicas, 10)}}}
}

// rolloutActions are Argo CD's Rollout actions: resume only when paused;
// abort, retry and pause only while an update is under way (the current
// revision is not the stable one), retry only once aborted; promote-full
// only during an update, and for a blue-green Rollout only once the
// controller (v0.10 and later) has observed the current generation.
func rolloutActions(obj *unstructured.Unstructured) []Action {
	str := func(path ...string) string { s, _, _ := unstructured.NestedString(obj.Object, path...); return s }
	pauseConditions, hasConditions, _ := unstructured.NestedSlice(obj.Object, "status", "pauseConditions")
	specPaused, _, _ := unstructured.NestedBool(obj.Object, "spec", "paused")
	paused := specPaused
	if hasConditions {
		paused = len(pauseConditions) > 0
	}
	aborted, _, _ := unstructured.NestedBool(obj.Object, "status", "abort")
	fullyPromoted := str("status", "currentPodHash") == str("status", "stableRS")
	promoteFull := true // disabled
	if _, hasStatus := obj.Object["status"]; hasStatus && !fullyPromoted {
		promoteFull = false
		observed, err := strconv.ParseInt(str("status", "observedGeneration"), 10, 64)
		if err != nil || observed > obj.GetGeneration() {
			// A v0.9 controller (observedGeneration a hash) promotes
			// only canaries fully.
			_, blueGreen, _ := unstructured.NestedMap(obj.Object, "spec", "strategy", "blueGreen")
			promoteFull = blueGreen
		}
	}
	return []Action{
		{Name: "abort", Disabled: fullyPromoted || aborted},
		{Name: "pause", Disabled: fullyPromoted || specPaused},
		{Name: "promote-full", Disabled: promoteFull},
		{Name: "restart"},
		{Name: "resume", Disabled: !paused},
		{Name: "retry", Disabled: fullyPromoted || !aborted},
	}
}

// planBuiltin plans a built-in action that obj lists enabled.
func planBuiltin(obj *unstructured.Unstructured, name string, params []Param, now time.Time) ([]Change, error) {
	gk := GroupKind(obj)
	if gk == gkRollout {
		return planRollout(obj, rolloutOps[name], now)
	}
	if gk == gkCronJob && name == "resume" {
		return merge(map[string]any{"spec": map[string]any{"suspend": false}})
	}
	switch name {
	case "restart":
		return merge(map[string]any{"spec": map[string]any{"template": map[string]any{"metadata": map[string]any{
			"annotations": map[string]any{RestartedAtAnnotation: now.UTC().Format(time.RFC3339)}}}}})
	case "pause", "resume":
		return merge(map[string]any{"spec": map[string]any{"paused": name == "pause"}})
	case "suspend":
		return merge(map[string]any{"spec": map[string]any{"suspend": true}})
	case "scale":
		replicas, err := replicasParam(params)
		if err != nil {
			return nil, err
		}
		return merge(map[string]any{"spec": map[string]any{"replicas": replicas}})
	case "create-job":
		job, err := JobFrom(obj, now)
		if err != nil {
			return nil, err
		}
		return []Change{{Create: job}}, nil
	}
	return nil, opserr.Invalid("no built-in action %q for %s", name, gk)
}

// merge is one merge patch of the object's spec.
func merge(patch map[string]any) ([]Change, error) {
	data, err := json.Marshal(patch)
	if err != nil {
		return nil, err
	}
	return []Change{{Patch: &rolloutops.Patch{Type: types.MergePatchType, Data: string(data)}}}, nil
}

// replicasParam reads scale's replicas: a whole number, at least 0.
func replicasParam(params []Param) (int64, error) {
	for _, p := range params {
		if p.Name != "replicas" {
			continue
		}
		n, err := strconv.ParseInt(p.Value, 10, 32)
		if err != nil || n < 0 {
			return 0, opserr.Invalid("scale: replicas %q is not a whole number of 0 or more", p.Value)
		}
		return n, nil
	}
	return 0, opserr.Invalid("scale needs the parameter replicas")
}

// planRollout plans a Rollout action with rolloutops: the patches the
// kubectl plugin sends.
func planRollout(obj *unstructured.Unstructured, op rolloutops.Op, now time.Time) ([]Change, error) {
	ro := &v1alpha1.Rollout{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, ro); err != nil {
		return nil, opserr.Invalid("reading rollout %s: %w", obj.GetName(), err)
	}
	plan, err := rolloutops.PlanOf(ro, nil, rolloutops.Request{Op: op}, now)
	if err != nil {
		return nil, err
	}
	changes := make([]Change, len(plan.Patches))
	for i := range plan.Patches {
		changes[i] = Change{Patch: &plan.Patches[i]}
	}
	return changes, nil
}

// JobFrom is the Job `kubectl create job --from=cronjob/<name>` makes of a
// CronJob at now, named as Argo CD's create-job names it
// (<cronjob>-<YYYYMMDDhhmm> in UTC): the job template's metadata and spec,
// owned by the CronJob and marked as made by hand.
func JobFrom(obj *unstructured.Unstructured, now time.Time) (*unstructured.Unstructured, error) {
	cj := &batchv1.CronJob{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, cj); err != nil {
		return nil, opserr.Invalid("reading cronjob %s: %w", obj.GetName(), err)
	}
	annotations := map[string]string{InstantiateAnnotation: "manual"}
	for k, v := range cj.Spec.JobTemplate.Annotations {
		annotations[k] = v
	}
	job := &batchv1.Job{
		TypeMeta: metav1.TypeMeta{APIVersion: "batch/v1", Kind: "Job"},
		ObjectMeta: metav1.ObjectMeta{
			Name:        fmt.Sprintf("%s-%s", cj.Name, now.UTC().Format("200601021504")),
			Namespace:   cj.Namespace,
			Labels:      cj.Spec.JobTemplate.Labels,
			Annotations: annotations,
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(cj,
				batchv1.SchemeGroupVersion.WithKind("CronJob"))},
		},
		Spec: cj.Spec.JobTemplate.Spec,
	}
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(job)
	if err != nil {
		return nil, err
	}
	u := &unstructured.Unstructured{Object: m}
	unstructured.RemoveNestedField(u.Object, "status")
	unstructured.RemoveNestedField(u.Object, "metadata", "creationTimestamp")
	return u, nil
}
