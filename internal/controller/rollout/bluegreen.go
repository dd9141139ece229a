package rollout

import (
	"context"
	"time"

	"k8s.io/utils/ptr"

	"github.com/skiffcd/skiff/api/v1alpha1"
	"github.com/skiffcd/skiff/internal/rollout"
)

// syncBlueGreen runs the new revision beside the active one, sends preview
// traffic to it, pauses when asked to, switches the active Service once the
// new pods are all available, and scales the old revision down after
// scaleDownDelaySeconds (rollout.PlanBlueGreen decides, this executes). An
// abort keeps (or puts) the active Service on the stable revision and
// scales the new one down after abortScaleDownDelaySeconds.
func (p *pass) syncBlueGreen(ctx context.Context) error {
	st := p.status
	if st.Abort && st.StableRS != "" && st.StableRS != p.hash {
		return p.abortBlueGreen(ctx)
	}
	// The new revision is not going down (an abort may have said so).
	if err := p.setAnnotation(ctx, p.newRS, AnnotationScaleDownDeadline, ""); err != nil {
		return err
	}
	activeHash := p.active.Spec.Selector[rollout.PodTemplateHashLabel]
	step := rollout.PlanBlueGreen(rollout.BlueGreenInput{
		Strategy:               p.ro.Spec.Strategy.BlueGreen,
		Replicas:               p.replicas,
		Paused:                 p.ro.Spec.Paused,
		Status:                 st,
		Hash:                   p.hash,
		ActiveHash:             activeHash,
		ActiveOurs:             p.rsByHash(activeHash) != nil,
		RollbackWithinWindow:   p.rollbackWithinWindow(),
		New:                    *counts(p.newRS),
		MinReadySecondsChanged: p.newRS.Spec.MinReadySeconds != p.ro.Spec.MinReadySeconds,
		PrePromotionBlocked:    p.gate.prePromotionBlocked,
		PostPromotionPending:   p.gate.postPromotionPending,
		Now:                    p.now,
	})
	switch step.Pause {
	case rollout.PauseAdded:
		p.addPause(v1alpha1.PauseReasonBlueGreenPause)
	case rollout.PauseRemoved:
		rollout.RemovePause(st, v1alpha1.PauseReasonBlueGreenPause)
		if step.Resumed {
			p.event("RolloutResumed", "Rollout resumed after autoPromotionSeconds")
		}
	}
	if step.Requeue {
		p.requeueAfter(step.RequeueAfter)
	}
	if err := p.scale(ctx, p.newRS, step.NewReplicas); err != nil {
		return err
	}
	if err := p.switchService(ctx, p.preview, p.hash); err != nil {
		return err
	}
	st.BlueGreen.PreviewSelector = ""
	if p.preview != nil {
		st.BlueGreen.PreviewSelector = p.hash
	}
	if step.Switch {
		if !step.OldActiveDeadline.IsZero() {
			if err := p.setAnnotation(ctx, p.rsByHash(activeHash), AnnotationScaleDownDeadline, step.OldActiveDeadline.UTC().Format(time.RFC3339)); err != nil {
				return err
			}
		}
		if err := p.switchService(ctx, p.active, p.hash); err != nil {
			return err
		}
	}
	st.BlueGreen.ActiveSelector = step.ActiveSelector
	if step.MarkStable {
		st.StableRS = p.hash
		st.PauseConditions = nil
		st.ControllerPause = false
	}
	return p.scaleDownBlueGreen(ctx)
}

// scaleDownBlueGreen sizes the ReplicaSets other than the new one
// (rollout.BlueGreenScaleDown), once the step has switched.
func (p *pass) scaleDownBlueGreen(ctx context.Context) error {
	st := p.status
	replicaSets := make([]rollout.BlueGreenReplicaSet, len(p.allRS))
	for i, rs := range p.allRS {
		replicaSets[i] = rollout.BlueGreenReplicaSet{
			Hash: rs.Labels[rollout.PodTemplateHashLabel], Replicas: specReplicas(rs), New: rs == p.newRS,
			HasDeadline: rs.Annotations[AnnotationScaleDownDeadline] != "",
		}
	}
	scales := rollout.BlueGreenScaleDown(replicaSets, st.BlueGreen.ActiveSelector, st.StableRS, p.ro.Spec.Strategy.BlueGreen.ScaleDownDelayRevisionLimit)
	for i, rs := range p.allRS {
		var err error
		switch scales[i] {
		case rollout.LeaveToStep:
		case rollout.ScaleDownBeyondLimit:
			if err = p.scale(ctx, rs, 0); err == nil {
				err = p.setAnnotation(ctx, rs, AnnotationScaleDownDeadline, "")
			}
		case rollout.KeepActive:
			if err = p.setAnnotation(ctx, rs, AnnotationScaleDownDeadline, ""); err == nil {
				err = p.scale(ctx, rs, p.replicas)
			}
		case rollout.KeepStable:
			err = p.scale(ctx, rs, p.replicas)
		case rollout.ScaleDownAtDeadline:
			err = p.scaleDownAfter(ctx, rs, 0)
		case rollout.ScaleDown:
			err = p.scale(ctx, rs, 0)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// abortBlueGreen puts the active and preview Services back on the stable
// revision and scales the new one down after abortScaleDownDelaySeconds
// (0 keeps it up).
func (p *pass) abortBlueGreen(ctx context.Context) error {
	bg := p.ro.Spec.Strategy.BlueGreen
	st := p.status
	stable := p.rsByHash(st.StableRS)
	if err := p.scale(ctx, stable, p.replicas); err != nil {
		return err
	}
	if err := p.setAnnotation(ctx, stable, AnnotationScaleDownDeadline, ""); err != nil {
		return err
	}
	if err := p.switchService(ctx, p.active, st.StableRS); err != nil {
		return err
	}
	if err := p.switchService(ctx, p.preview, st.StableRS); err != nil {
		return err
	}
	st.BlueGreen.ActiveSelector = st.StableRS
	st.BlueGreen.PreviewSelector = ""
	if p.preview != nil {
		st.BlueGreen.PreviewSelector = st.StableRS
	}
	st.PauseConditions = nil
	st.ControllerPause = false
	if delay := ptr.Deref(bg.AbortScaleDownDelaySeconds, defaultAbortScaleDownDelaySecs); delay > 0 {
		if err := p.scaleDownAfter(ctx, p.newRS, time.Duration(delay)*time.Second); err != nil {
			return err
		}
	}
	for _, rs := range p.allRS {
		if rs == p.newRS || rs == stable {
			continue
		}
		if err := p.scale(ctx, rs, 0); err != nil {
			return err
		}
	}
	return nil
}

// addPause pauses the rollout for reason, as the controller (not the user).
func (p *pass) addPause(reason v1alpha1.PauseReason) {
	if rollout.FindPause(p.status, reason) != nil {
		return
	}
	p.status.PauseConditions = append(p.status.PauseConditions, v1alpha1.PauseCondition{Reason: reason, StartTime: p.metaNow()})
	p.status.ControllerPause = true
	p.event(string(rollout.ReasonRolloutPaused), "Rollout is paused (%s)", reason)
}
