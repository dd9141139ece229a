package rollout

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	"github.com/skiffcd/skiff/api/v1alpha1"
	"github.com/skiffcd/skiff/internal/rollout"
	"github.com/skiffcd/skiff/internal/rollout/traffic"
)

// syncCanary sizes the canary and stable ReplicaSets for the current step
// (or sets the weight on the traffic routers), runs the steps, and makes
// the new revision stable once the steps are done and its pods available:
// rollout.StartCanary, rollout.CanaryReplicas and rollout.PlanCanaryProgress
// decide, this executes.
func (p *pass) syncCanary(ctx context.Context) error {
	canary := p.ro.Spec.Strategy.Canary
	st := p.status
	start := rollout.StartCanary(canary.Steps, st, p.hash)
	if start.StepIndex != nil {
		st.CurrentStepIndex = start.StepIndex
		st.PauseConditions = nil
		st.ControllerPause = false
	}
	stableRS := p.rsByHash(st.StableRS)
	if start.IsStable {
		stableRS = nil
	}

	routers, routed, err := p.trafficRouters(ctx)
	if err != nil {
		return err
	}
	// Revisions that are neither canary nor stable go first.
	others, err := p.scaleDownOlder(ctx, stableRS, routed)
	if err != nil {
		return err
	}

	in := rollout.CanaryInput{
		Replicas:               p.replicas,
		Weight:                 start.Weight,
		SetCanaryScale:         rollout.CurrentSetCanaryScale(canary.Steps, st.CurrentStepIndex),
		MaxSurge:               canary.MaxSurge,
		MaxUnavailable:         canary.MaxUnavailable,
		Canary:                 counts(p.newRS),
		Stable:                 counts(stableRS),
		Others:                 others,
		Aborted:                start.Aborted,
		Steps:                  canary.Steps,
		TrafficRouted:          routed,
		DynamicStableScale:     canary.DynamicStableScale,
		MinPodsPerReplicaSet:   canary.MinPodsPerReplicaSet,
		CurrentWeights:         st.Canary.Weights,
		KeepCanaryScaleOnAbort: canary.AbortScaleDownDelaySeconds != nil && *canary.AbortScaleDownDelaySeconds == 0,
	}
	wantCanary, wantStable := rollout.CanaryReplicas(in)
	if err := p.scale(ctx, stableRS, wantStable); err != nil {
		return err
	}
	if err := p.setAnnotation(ctx, stableRS, AnnotationScaleDownDeadline, ""); err != nil {
		return err
	}
	if err := p.scaleCanary(ctx, stableRS, start.Aborted, wantCanary); err != nil {
		return err
	}

	progress := rollout.PlanCanaryProgress(rollout.CanaryProgressInput{
		Start: start, Status: st, Hash: p.hash, Paused: p.ro.Spec.Paused,
		Replicas: in, WantCanary: wantCanary, WantStable: wantStable,
		// The counts after this pass's scaling.
		Canary: counts(p.newRS), Stable: counts(stableRS),
		StepAnalysisSucceeded: p.gate.stepSucceeded,
		Now:                   p.now,
	})
	if err := p.setWeight(ctx, routers, progress.RoutedWeight, stableRS); err != nil {
		return err
	}
	if progress.Pause == rollout.PauseAdded {
		p.addPause(v1alpha1.PauseReasonCanaryPauseStep)
	}
	if progress.StepCompleted {
		index := *st.CurrentStepIndex
		rollout.RemovePause(st, v1alpha1.PauseReasonCanaryPauseStep)
		st.ControllerPause = false
		st.CurrentStepIndex = ptr.To(index + 1)
		p.event("RolloutStepCompleted", "Rollout step %d/%d completed (%s)", index+1, len(canary.Steps), stepString(canary.Steps[index]))
	}
	if progress.MarkStable {
		st.StableRS = p.hash
		st.PauseConditions = nil
		st.ControllerPause = false
	}
	if progress.Requeue {
		p.requeueAfter(progress.RequeueAfter)
	}
	if err := p.switchService(ctx, p.canarySvc, progress.CanaryServiceTarget); err != nil {
		return err
	}
	return p.switchService(ctx, p.stableSvc, st.StableRS)
}

// scaleCanary sizes the canary ReplicaSet. After an abort of a
// traffic-routed canary it keeps its pods until the stable side can take
// all the traffic, then for abortScaleDownDelaySeconds.
func (p *pass) scaleCanary(ctx context.Context, stableRS *appsv1.ReplicaSet, aborted bool, want int32) error {
	delay, delayed := rollout.CanaryAbortScaleDownDelay(p.ro.Spec.Strategy.Canary)
	if !aborted || stableRS == nil || !delayed {
		if err := p.setAnnotation(ctx, p.newRS, AnnotationScaleDownDeadline, ""); err != nil {
			return err
		}
		return p.scale(ctx, p.newRS, want)
	}
	if _, started := p.newRS.Annotations[AnnotationScaleDownDeadline]; started || available(stableRS) >= p.replicas {
		return p.scaleDownAfter(ctx, p.newRS, delay)
	}
	return nil
}

// scaleDownOlder scales the ReplicaSets that are neither canary nor
// stable down as far as this pass may (rollout.ScaleDownOlder), keeping the
// previous stable one of a traffic-routed canary up for its
// scaleDownDelaySeconds, and returns their counts for the canary math.
func (p *pass) scaleDownOlder(ctx context.Context, stableRS *appsv1.ReplicaSet, routed bool) ([]rollout.ReplicaSetCounts, error) {
	canary := p.ro.Spec.Strategy.Canary
	in := rollout.OlderInput{
		Replicas:           p.replicas,
		MaxSurge:           canary.MaxSurge,
		MaxUnavailable:     canary.MaxUnavailable,
		TrafficRouted:      routed,
		DynamicStableScale: canary.DynamicStableScale,
		FullyPromoted:      p.status.StableRS == p.hash,
		ScaleDownDelay:     rollout.CanaryScaleDownDelay(canary),
		RevisionLimit:      canary.ScaleDownDelayRevisionLimit,
		Now:                p.now,
	}
	var older []*appsv1.ReplicaSet
	for i := len(p.allRS) - 1; i >= 0; i-- { // newest revision first
		rs := p.allRS[i]
		in.Available += available(rs)
		if rs == p.newRS || rs == stableRS {
			continue
		}
		older = append(older, rs)
		o := rollout.OlderReplicaSet{Replicas: specReplicas(rs), Referenced: p.referenced(rs)}
		if rs.Status.ObservedGeneration >= rs.Generation {
			o.Unavailable = max(0, o.Replicas-rs.Status.AvailableReplicas)
		}
		if deadline, err := time.Parse(time.RFC3339, rs.Annotations[AnnotationScaleDownDeadline]); err == nil {
			o.ScaleDownDeadline = deadline
		}
		in.Older = append(in.Older, o)
	}
	var out []rollout.ReplicaSetCounts
	for i, scale := range rollout.ScaleDownOlder(in) {
		rs := older[i]
		deadline := in.Older[i].ScaleDownDeadline
		if !scale.Deadline.IsZero() {
			deadline = scale.Deadline
			if err := p.setAnnotation(ctx, rs, AnnotationScaleDownDeadline, deadline.UTC().Format(time.RFC3339)); err != nil {
				return nil, err
			}
		}
		if scale.Replicas > 0 && !deadline.IsZero() {
			p.requeueAfter(deadline.Sub(p.now))
		}
		if err := p.scale(ctx, rs, scale.Replicas); err != nil {
			return nil, err
		}
		if scale.Replicas == 0 {
			if err := p.setAnnotation(ctx, rs, AnnotationScaleDownDeadline, ""); err != nil {
				return nil, err
			}
		}
		// The status as last seen: a pod of a ReplicaSet just scaled down
		// counts as available (still taking traffic) until it is gone.
		out = append(out, rollout.ReplicaSetCounts{Replicas: scale.Replicas, AvailableReplicas: rs.Status.AvailableReplicas})
	}
	return out, nil
}

// referenced says the Rollout, as read at the start of the pass, or one of
// its Services still sends traffic to rs: it is not scaled down yet.
func (p *pass) referenced(rs *appsv1.ReplicaSet) bool {
	hash := rs.Labels[rollout.PodTemplateHashLabel]
	st := p.ro.Status
	refs := []string{st.StableRS, st.CurrentPodHash}
	if w := st.Canary.Weights; w != nil {
		refs = append(refs, w.Canary.PodTemplateHash, w.Stable.PodTemplateHash)
	}
	for _, svc := range []*corev1.Service{p.canarySvc, p.stableSvc} {
		if svc != nil {
			refs = append(refs, svc.Spec.Selector[rollout.PodTemplateHashLabel])
		}
	}
	return hash != "" && slices.Contains(refs, hash)
}

// counts is what the canary math needs to know of rs; a status older than
// its last scale counts no pods.
func counts(rs *appsv1.ReplicaSet) *rollout.ReplicaSetCounts {
	if rs == nil {
		return nil
	}
	c := &rollout.ReplicaSetCounts{Replicas: specReplicas(rs)}
	if rs.Status.ObservedGeneration >= rs.Generation {
		c.AvailableReplicas, c.CreatedReplicas = rs.Status.AvailableReplicas, rs.Status.Replicas
	}
	return c
}

// stepString names a step in Events, as the plugin shows it.
func stepString(step v1alpha1.CanaryStep) string {
	switch {
	case step.SetWeight != nil:
		return fmt.Sprintf("setWeight: %d", *step.SetWeight)
	case step.Pause != nil:
		if step.Pause.Duration == nil {
			return "pause"
		}
		return "pause: " + step.Pause.Duration.String()
	case step.SetCanaryScale != nil:
		s := step.SetCanaryScale
		switch {
		case s.Weight != nil:
			return fmt.Sprintf("setCanaryScale{weight: %d}", *s.Weight)
		case s.Replicas != nil:
			return fmt.Sprintf("setCanaryScale{replicas: %d}", *s.Replicas)
		}
		return "setCanaryScale{matchTrafficWeight: true}"
	case step.Analysis != nil:
		var names []string
		for _, t := range step.Analysis.Templates {
			names = append(names, t.TemplateName)
		}
		return "analysis: " + strings.Join(names, ",")
	case step.Experiment != nil:
		return "experiment"
	}
	return "step"
}

// trafficRouters returns the routers of spec.strategy.canary.trafficRouting,
// and whether traffic is routed at all.
func (p *pass) trafficRouters(ctx context.Context) ([]traffic.Router, bool, error) {
	if p.ro.Spec.Strategy.Canary.TrafficRouting == nil {
		return nil, false, nil
	}
	routers, err := traffic.NewWithContext(ctx, p.r.Client, p.ro)
	if err != nil {
		return nil, true, fmt.Errorf("building the traffic routers of Rollout %s/%s: %w", p.ro.Namespace, p.ro.Name, err)
	}
	return routers, true, nil
}

// setWeight sends weight percent of the traffic to the canary on every
// router and records it in status.canary.weights. Without routers the
// weight is what the replica split approximates.
func (p *pass) setWeight(ctx context.Context, routers []traffic.Router, weight int32, stableRS *appsv1.ReplicaSet) error {
	canary := p.ro.Spec.Strategy.Canary
	if canary.TrafficRouting == nil {
		p.status.Canary.Weights = nil
		return nil
	}
	for _, router := range routers {
		if err := router.SetWeight(ctx, weight); err != nil {
			return fmt.Errorf("setting weight %d on the %s router: %w", weight, router.Type(), err)
		}
	}
	stableHash := p.status.StableRS
	if stableRS == nil {
		stableHash = p.hash
	}
	p.status.Canary.Weights = &v1alpha1.TrafficWeights{
		Canary: v1alpha1.WeightDestination{Weight: weight, ServiceName: canary.CanaryService, PodTemplateHash: p.hash},
		Stable: v1alpha1.WeightDestination{Weight: 100 - weight, ServiceName: canary.StableService, PodTemplateHash: stableHash},
	}
	return nil
}
