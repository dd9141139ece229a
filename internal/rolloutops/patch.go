package rolloutops

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/types"

	"github.com/skiffcd/skiff/api/v1alpha1"
	"github.com/skiffcd/skiff/internal/rollout"
)

// Patch is one patch of a Rollout, to the main resource or to its status
// subresource.
type Patch struct {
	Type types.PatchType
	Data string
	// Status sends the patch to the status subresource.
	Status bool
}

func specPatch(data string) Patch { return Patch{Type: types.MergePatchType, Data: data} }
func statusPatch(data string) Patch {
	return Patch{Type: types.MergePatchType, Data: data, Status: true}
}

// PromotePatches are the patches `promote` sends, status first as the
// plugin does. A paused rollout has its pause conditions cleared (and
// spec.paused unset); a canary that is not paused moves to the next step;
// full asks for a full promotion unless the current revision is already
// stable. status.controllerPause is left to the controller, which reads a
// cleared pause condition with controllerPause still set as a promotion.
func PromotePatches(ro *v1alpha1.Rollout, full bool) []Patch {
	if full {
		if ro.Status.CurrentPodHash == ro.Status.StableRS {
			return nil
		}
		return []Patch{statusPatch(`{"status":{"promoteFull":true}}`)}
	}
	var patches []Patch
	if len(ro.Status.PauseConditions) > 0 {
		patches = append(patches, statusPatch(`{"status":{"pauseConditions":null}}`))
	} else if c := ro.Spec.Strategy.Canary; c != nil && len(c.Steps) > 0 {
		index := int32(0)
		if ro.Status.CurrentStepIndex != nil {
			index = *ro.Status.CurrentStepIndex
		}
		if index < int32(len(c.Steps)) {
			index++
		}
		patches = append(patches, statusPatch(fmt.Sprintf(`{"status":{"pauseConditions":null,"currentStepIndex":%d}}`, index)))
	}
	if ro.Spec.Paused {
		patches = append(patches, specPatch(`{"spec":{"paused":false}}`))
	}
	return patches
}

// AbortPatch stops the update and scales back to the stable revision.
func AbortPatch() Patch { return statusPatch(`{"status":{"abort":true}}`) }

// RetryPatch resumes an aborted update.
func RetryPatch() Patch { return statusPatch(`{"status":{"abort":false}}`) }

// PausePatch pauses the rollout where it is.
func PausePatch() Patch { return specPatch(`{"spec":{"paused":true}}`) }

// RestartPatch asks for every pod created before at to be replaced.
func RestartPatch(at time.Time) Patch {
	return specPatch(fmt.Sprintf(`{"spec":{"restartAt":%q}}`, at.UTC().Format(time.RFC3339)))
}

type jsonPatchOp struct {
	Op    string `json:"op"`
	Path  string `json:"path"`
	Value any    `json:"value"`
}

// ContainerImage is one image to set: on the container of that name, or
// on every container for "*".
type ContainerImage struct {
	Container string `json:"container"`
	Image     string `json:"image"`
}

func (c ContainerImage) String() string { return c.Container + "=" + c.Image }

// SetImagePatch sets the images of containers, in containers, init
// containers and ephemeral containers; a named container overrides "*",
// and of two images for one container the later wins. The JSON patch tests
// each container's name before replacing its image, so it fails rather
// than change the wrong container when the list changed meanwhile.
func SetImagePatch(ro *v1alpha1.Rollout, set []ContainerImage) (Patch, error) {
	if len(set) == 0 {
		return Patch{}, invalid("no image to set on rollout %s", ro.Name)
	}
	if ref := ro.Spec.WorkloadRef; ref != nil {
		pairs := make([]string, len(set))
		for i, ci := range set {
			pairs[i] = ci.String()
		}
		return Patch{}, invalid("rollout %s takes its pod template from %s %s (workloadRef): set the image there, e.g. kubectl set image deployment/%s %s",
			ro.Name, ref.Kind, ref.Name, ref.Name, strings.Join(pairs, " "))
	}
	images := map[string]string{}
	var order []string
	for _, ci := range set {
		if ci.Container == "" || ci.Image == "" {
			return Patch{}, invalid("%q: want a container name and an image", ci.String())
		}
		if _, seen := images[ci.Container]; !seen {
			order = append(order, ci.Container)
		}
		images[ci.Container] = ci.Image
	}
	spec := &ro.Spec.Template.Spec
	lists := []struct {
		field      string
		containers []string
	}{
		{"containers", names(spec.Containers)},
		{"initContainers", names(spec.InitContainers)},
	}
	var ephemeral []string
	for _, c := range spec.EphemeralContainers {
		ephemeral = append(ephemeral, c.Name)
	}
	lists = append(lists, struct {
		field      string
		containers []string
	}{"ephemeralContainers", ephemeral})
	var ops []jsonPatchOp
	found := map[string]bool{}
	for _, l := range lists {
		for i, name := range l.containers {
			image, ok := images[name]
			if !ok {
				image, ok = images["*"]
			}
			if !ok {
				continue
			}
			found[name], found["*"] = true, true
			path := fmt.Sprintf("/spec/template/spec/%s/%d", l.field, i)
			ops = append(ops, jsonPatchOp{Op: "test", Path: path + "/name", Value: name},
				jsonPatchOp{Op: "replace", Path: path + "/image", Value: image})
		}
	}
	for _, name := range order {
		if !found[name] {
			return Patch{}, invalid("rollout %s has no container named %q", ro.Name, name)
		}
	}
	data, err := json.Marshal(ops)
	if err != nil {
		return Patch{}, err
	}
	return Patch{Type: types.JSONPatchType, Data: string(data)}, nil
}

func names(containers []corev1.Container) []string {
	out := make([]string, len(containers))
	for i, c := range containers {
		out[i] = c.Name
	}
	return out
}

// UndoPatch restores the pod template of the ReplicaSet of toRevision (0:
// the revision before the newest) into ro, from rss (newest first). It
// returns no patch and a reason when the template is already that one.
func UndoPatch(ro *v1alpha1.Rollout, rss []appsv1.ReplicaSet, toRevision int64) (*Patch, string, error) {
	var target *appsv1.ReplicaSet
	newest := int64(-1)
	for i := range rss {
		newest = max(newest, v1alpha1.RolloutRevision(&rss[i]))
	}
	for i := range rss {
		rev := v1alpha1.RolloutRevision(&rss[i])
		want := rev == toRevision
		if toRevision == 0 {
			want = rev < newest && (target == nil || rev > v1alpha1.RolloutRevision(target))
		}
		if want {
			target = &rss[i]
		}
	}
	if target == nil {
		if toRevision > 0 {
			return nil, "", invalid("rollout %s has no revision %d", ro.Name, toRevision)
		}
		return nil, "", invalid("rollout %s has no previous revision", ro.Name)
	}
	template := RestoredTemplate(target, ro.Status.CollisionCount)
	if podHash(target) == rollout.PodTemplateHash(&ro.Spec.Template, ro.Status.CollisionCount) || apiequality.Semantic.DeepEqual(&ro.Spec.Template, template) {
		return nil, fmt.Sprintf("skipped rollback (current template already matches revision %d)", v1alpha1.RolloutRevision(target)), nil
	}
	data, err := json.Marshal([]jsonPatchOp{{Op: "replace", Path: "/spec/template", Value: template}})
	if err != nil {
		return nil, "", err
	}
	return &Patch{Type: types.JSONPatchType, Data: string(data)}, "", nil
}

// podHash is the pod template hash rs is labelled with.
func podHash(rs *appsv1.ReplicaSet) string {
	return rs.Labels[rollout.PodTemplateHashLabel]
}
