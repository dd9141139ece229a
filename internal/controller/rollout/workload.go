package rollout

import (
	"context"
	"fmt"
	"strconv"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/skiffcd/skiff/api/v1alpha1"
)

// The scaleDown values of spec.workloadRef.
const (
	workloadScaleDownNever         = "never"
	workloadScaleDownOnSuccess     = "onsuccess"
	workloadScaleDownProgressively = "progressively"
)

// validateWorkloadRef checks the shape of spec.workloadRef, as Argo
// Rollouts does; it returns "" for a Rollout without one.
func validateWorkloadRef(spec *v1alpha1.RolloutSpec) string {
	ref := spec.WorkloadRef
	switch {
	case ref == nil:
		return ""
	case ref.Kind != "Deployment" || (ref.APIVersion != "" && ref.APIVersion != "apps/v1"):
		return fmt.Sprintf("spec.workloadRef: Unsupported value: %s %s: Skiff takes the template of an apps/v1 Deployment", ref.APIVersion, ref.Kind)
	case ref.Name == "":
		return "spec.workloadRef.name: Required value"
	case len(spec.Template.Spec.Containers) > 0:
		return "spec.template: Invalid value: template must be empty for workload reference rollout"
	}
	switch ref.ScaleDown {
	case "", workloadScaleDownNever, workloadScaleDownOnSuccess, workloadScaleDownProgressively:
		return ""
	}
	return fmt.Sprintf("spec.workloadRef.scaleDown: Unsupported value: %q: supported values: \"never\", \"onsuccess\", \"progressively\"", ref.ScaleDown)
}

// resolveWorkload takes the pod template (and, when the Rollout has none,
// the selector) from the Deployment spec.workloadRef names. It returns a
// message when the reference cannot be used.
func (p *pass) resolveWorkload(ctx context.Context) (string, error) {
	if msg := validateWorkloadRef(&p.ro.Spec); msg != "" || p.ro.Spec.WorkloadRef == nil {
		return msg, nil
	}
	ref := p.ro.Spec.WorkloadRef
	dep := &appsv1.Deployment{}
	err := p.r.APIReader.Get(ctx, client.ObjectKey{Namespace: p.ro.Namespace, Name: ref.Name}, dep)
	if apierrors.IsNotFound(err) {
		return fmt.Sprintf("spec.workloadRef.name: Invalid value: %q: Deployment %q not found", ref.Name, ref.Name), nil
	}
	if err != nil {
		return "", fmt.Errorf("reading Deployment %s/%s: %w", p.ro.Namespace, ref.Name, err)
	}
	// The template lives in memory only: the status write does not send
	// the spec, and the Rollout keeps referring to the Deployment.
	p.ro = p.ro.DeepCopy()
	p.ro.Spec.Template = *dep.Spec.Template.DeepCopy()
	if p.ro.Spec.Selector == nil {
		p.ro.Spec.Selector = dep.Spec.Selector.DeepCopy()
	}
	p.workload = dep
	p.status.WorkloadObservedGeneration = strconv.FormatInt(dep.Generation, 10)
	return "", nil
}

// scaleDownWorkload scales the referenced Deployment down as its
// scaleDown says: onsuccess once the Rollout's revision is stable and all
// available, progressively by as many pods as the Rollout has available.
// It never scales the Deployment up.
func (p *pass) scaleDownWorkload(ctx context.Context) error {
	if p.workload == nil {
		return nil
	}
	current := ptr.Deref(p.workload.Spec.Replicas, 1)
	want := current
	switch p.ro.Spec.WorkloadRef.ScaleDown {
	case workloadScaleDownOnSuccess:
		if p.status.StableRS == p.hash && saturated(p.newRS, p.replicas) {
			want = 0
		}
	case workloadScaleDownProgressively:
		var availableNow int32
		for _, rs := range p.allRS {
			availableNow += available(rs)
		}
		want = max(0, p.replicas-availableNow)
	}
	if want >= current {
		return nil
	}
	patch := client.MergeFrom(p.workload.DeepCopy())
	p.workload.Spec.Replicas = ptr.To(want)
	if err := p.r.Client.Patch(ctx, p.workload, patch); err != nil {
		return fmt.Errorf("scaling Deployment %s/%s to %d: %w", p.workload.Namespace, p.workload.Name, want, err)
	}
	p.event("ScalingDeployment", "Scaled down Deployment %s from %d to %d (workloadRef scaleDown %s)", p.workload.Name, current, want, p.ro.Spec.WorkloadRef.ScaleDown)
	return nil
}
