package rollout

import (
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/skiffcd/skiff/api/v1alpha1"
	"github.com/skiffcd/skiff/internal/rollout"
)

// validate returns why the spec cannot be run, or "". The messages follow
// Kubernetes' field error format, as Argo Rollouts' do.
func validate(ro *v1alpha1.Rollout) string {
	spec := &ro.Spec
	switch {
	case spec.Replicas != nil && *spec.Replicas < 0:
		return fmt.Sprintf("spec.replicas: Invalid value: %d: must be greater than or equal to 0", *spec.Replicas)
	case spec.Selector == nil:
		return "spec.selector: Required value: Rollout has missing field '.spec.selector'"
	case spec.Strategy.BlueGreen == nil && spec.Strategy.Canary == nil:
		return "spec.strategy: Required value: Rollout has missing field '.spec.strategy.canary or .spec.strategy.blueGreen'"
	case spec.Strategy.BlueGreen != nil && spec.Strategy.Canary != nil:
		return "spec.strategy: Invalid value: Multiple Strategies can not be listed"
	}
	selector, err := metav1.LabelSelectorAsSelector(spec.Selector)
	if err != nil {
		return fmt.Sprintf("spec.selector: Invalid value: %v", err)
	}
	if selector.Empty() {
		return "spec.selector: Invalid value: empty selector is invalid for Rollout"
	}
	if !selector.Matches(labels.Set(spec.Template.Labels)) {
		return "spec.template.metadata.labels: Invalid value: `selector` does not match template `labels`"
	}
	if bg := spec.Strategy.BlueGreen; bg != nil {
		if bg.ActiveService == "" {
			return "spec.strategy.blueGreen.activeService: Required value"
		}
		if bg.ActiveService == bg.PreviewService {
			return fmt.Sprintf("spec.strategy.blueGreen.previewService: Invalid value: %q: must not be the active Service", bg.PreviewService)
		}
		return ""
	}
	canary := spec.Strategy.Canary
	if canary.CanaryService != "" && canary.CanaryService == canary.StableService {
		return fmt.Sprintf("spec.strategy.canary.stableService: Invalid value: %q: must not be the canary Service", canary.StableService)
	}
	for i, step := range canary.Steps {
		if step.SetWeight != nil && (*step.SetWeight < 0 || *step.SetWeight > 100) {
			return fmt.Sprintf("spec.strategy.canary.steps[%d].setWeight: Invalid value: %d: must be between 0 and 100", i, *step.SetWeight)
		}
		if step.Pause != nil {
			if _, _, err := rollout.PauseDuration(step.Pause); err != nil {
				return fmt.Sprintf("spec.strategy.canary.steps[%d].pause.duration: Invalid value: %v", i, err)
			}
		}
	}
	return ""
}

// setInvalid marks the spec as invalid: a terminal condition, and nothing
// is scaled or switched until the spec (or a missing Service) changes.
func (p *pass) setInvalid(msg string) {
	p.invalid = true
	rollout.SetCondition(p.status, v1alpha1.InvalidSpec, corev1.ConditionTrue, rollout.ReasonInvalidSpec, msg, p.metaNow())
}

// reportUnsupported records the fields Skiff accepts but does not act on in
// an UnsupportedField condition, so they are not silently ignored.
func (p *pass) reportUnsupported() {
	var fields []string
	add := func(set bool, field string) {
		if set {
			fields = append(fields, field)
		}
	}
	spec := &p.ro.Spec
	if bg := spec.Strategy.BlueGreen; bg != nil {
	}
	if c := spec.Strategy.Canary; c != nil {
		add(c.PingPong != nil, "canary.pingPong")
		for i, step := range c.Steps {
			add(step.Experiment != nil, fmt.Sprintf("canary.steps[%d].experiment (skipped)", i))
			add(step.Plugin != nil, fmt.Sprintf("canary.steps[%d].plugin (skipped)", i))
			add(step.SetHeaderRoute != nil, fmt.Sprintf("canary.steps[%d].setHeaderRoute (skipped)", i))
			add(step.SetMirrorRoute != nil, fmt.Sprintf("canary.steps[%d].setMirrorRoute (skipped)", i))
		}
	}
	if len(fields) == 0 {
		rollout.RemoveCondition(p.status, v1alpha1.RolloutUnsupportedField)
		return
	}
	rollout.SetCondition(p.status, v1alpha1.RolloutUnsupportedField, corev1.ConditionTrue, rollout.ReasonUnsupportedField,
		"Skiff does not implement: "+strings.Join(fields, ", "), p.metaNow())
}

// serviceNames lists the Services a Rollout points at.
func serviceNames(ro *v1alpha1.Rollout) []string {
	var names []string
	if bg := ro.Spec.Strategy.BlueGreen; bg != nil {
		names = append(names, bg.ActiveService, bg.PreviewService)
	}
	if c := ro.Spec.Strategy.Canary; c != nil {
		names = append(names, c.CanaryService, c.StableService)
	}
	return names
}

// templateRefs lists the analysis templates a Rollout names.
func templateRefs(ro *v1alpha1.Rollout) []v1alpha1.AnalysisTemplateRef {
	var refs []v1alpha1.AnalysisTemplateRef
	if bg := ro.Spec.Strategy.BlueGreen; bg != nil {
		for _, a := range []*v1alpha1.RolloutAnalysis{bg.PrePromotionAnalysis, bg.PostPromotionAnalysis} {
			if a != nil {
				refs = append(refs, a.Templates...)
			}
		}
	}
	if c := ro.Spec.Strategy.Canary; c != nil {
		if c.Analysis != nil {
			refs = append(refs, c.Analysis.Templates...)
		}
		for _, step := range c.Steps {
			if step.Analysis != nil {
				refs = append(refs, step.Analysis.Templates...)
			}
		}
	}
	return refs
}

// missingServiceError is a Service the spec names that does not exist.
type missingServiceError struct {
	field, name string
}

func (e *missingServiceError) Error() string {
	return fmt.Sprintf("%s: Invalid value: %q: service %q not found", e.field, e.name, e.name)
}

// loadServices reads the Services the strategy names.
func (p *pass) loadServices(ctx context.Context) error {
	get := func(field, name string) (*corev1.Service, error) {
		if name == "" {
			return nil, nil
		}
		svc := &corev1.Service{}
		err := p.r.Client.Get(ctx, client.ObjectKey{Namespace: p.ro.Namespace, Name: name}, svc)
		if apierrors.IsNotFound(err) {
			return nil, &missingServiceError{field: field, name: name}
		}
		if err != nil {
			return nil, fmt.Errorf("reading Service %s/%s: %w", p.ro.Namespace, name, err)
		}
		return svc, nil
	}
	var err error
	if bg := p.ro.Spec.Strategy.BlueGreen; bg != nil {
		if p.active, err = get("spec.strategy.blueGreen.activeService", bg.ActiveService); err != nil {
			return err
		}
		p.preview, err = get("spec.strategy.blueGreen.previewService", bg.PreviewService)
		return err
	}
	c := p.ro.Spec.Strategy.Canary
	if p.canarySvc, err = get("spec.strategy.canary.canaryService", c.CanaryService); err != nil {
		return err
	}
	p.stableSvc, err = get("spec.strategy.canary.stableService", c.StableService)
	return err
}

// switchService points svc at the pods of one revision, and marks it as
// managed by this Rollout as Argo Rollouts does.
func (p *pass) switchService(ctx context.Context, svc *corev1.Service, hash string) error {
	if svc == nil || hash == "" {
		return nil
	}
	old := svc.Spec.Selector[rollout.PodTemplateHashLabel]
	if old == hash && svc.Annotations[AnnotationManagedBy] == p.ro.Name {
		return nil
	}
	patch := client.MergeFrom(svc.DeepCopy())
	if svc.Spec.Selector == nil {
		svc.Spec.Selector = map[string]string{}
	}
	svc.Spec.Selector[rollout.PodTemplateHashLabel] = hash
	if svc.Annotations == nil {
		svc.Annotations = map[string]string{}
	}
	svc.Annotations[AnnotationManagedBy] = p.ro.Name
	if err := p.r.Client.Patch(ctx, svc, patch); err != nil {
		return fmt.Errorf("switching Service %s/%s to %s: %w", svc.Namespace, svc.Name, hash, err)
	}
	if old != hash {
		p.event("SwitchService", "Switched selector for service '%s' from '%s' to '%s'", svc.Name, old, hash)
	}
	return nil
}
