package rollout

import (
	"context"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/utils/ptr"

	"github.com/skiffcd/skiff/api/v1alpha1"
	"github.com/skiffcd/skiff/internal/rollout"
)

// syncBlueGreen runs the new revision beside the active one, sends preview
// traffic to it, pauses when asked to, switches the active Service once the
// new pods are all available, and scales the old revision down after
// scaleDownDelaySeconds. An abort keeps (or puts) the active Service on the
// stable revision and scales the new one down after
// abortScaleDownDelaySeconds.
func (p *pass) syncBlueGreen(ctx context.Context) error {
	bg := p.ro.Spec.Strategy.BlueGreen
	st := p.status
	activeHash := p.active.Spec.Selector[rollout.PodTemplateHashLabel]
	if st.Abort && st.StableRS != "" && st.StableRS != p.hash {
		return p.abortBlueGreen(ctx)
	}
	if err := p.setAnnotation(ctx, p.newRS, AnnotationScaleDownDeadline, ""); err != nil {
		return err
	}
	// Without an active revision of ours there is nothing to protect: the
	// first revision (and one that follows a broken selector) goes live as
	// soon as it is available, without a pause; so does a rollback within
	// the rollbackWindow.
	fastTrack := p.rsByHash(activeHash) == nil || activeHash == p.hash || p.rollbackWithinWindow()
	promote := fastTrack || (p.blueGreenPause() && !p.gate.prePromotionBlocked)

	want := p.replicas
	if !promote && bg.PreviewReplicaCount != nil {
		want = min(*bg.PreviewReplicaCount, p.replicas)
	}
	if err := p.scale(ctx, p.newRS, want); err != nil {
		return err
	}
	if err := p.switchService(ctx, p.preview, p.hash); err != nil {
		return err
	}
	st.BlueGreen.PreviewSelector = ""
	if p.preview != nil {
		st.BlueGreen.PreviewSelector = p.hash
	}

	if activeHash != p.hash && promote && !p.ro.Spec.Paused && saturated(p.newRS, p.replicas) {
		if old := p.rsByHash(activeHash); old != nil {
			delay := time.Duration(ptr.Deref(bg.ScaleDownDelaySeconds, defaultScaleDownDelaySeconds)) * time.Second
			if err := p.setAnnotation(ctx, old, AnnotationScaleDownDeadline, p.now.Add(delay).UTC().Format(time.RFC3339)); err != nil {
				return err
			}
		}
		if err := p.switchService(ctx, p.active, p.hash); err != nil {
			return err
		}
		activeHash = p.hash
	}
	st.BlueGreen.ActiveSelector = activeHash

	// With postPromotionAnalysis the old revision stays stable (and up)
	// until the analysis passes; if it fails, the abort switches back to it.
	if activeHash == p.hash && saturated(p.newRS, p.replicas) && st.StableRS != p.hash && !p.gate.postPromotionPending {
		st.StableRS = p.hash
		st.PauseConditions = nil
		st.ControllerPause = false
	}

	// The active revision stays at full size until the switch; every other
	// old revision goes away, the one just switched from after its delay.
	// scaleDownDelayRevisionLimit bounds how many old revisions wait out
	// their delay up: the newest ones do, the older go down at once.
	beyondLimit := map[*appsv1.ReplicaSet]bool{}
	if limit := bg.ScaleDownDelayRevisionLimit; limit != nil {
		var waiting int32
		for i := len(p.allRS) - 1; i >= 0; i-- { // newest first
			rs := p.allRS[i]
			hash := rs.Labels[rollout.PodTemplateHashLabel]
			if rs == p.newRS || hash == activeHash || hash == st.StableRS ||
				rs.Annotations[AnnotationScaleDownDeadline] == "" || specReplicas(rs) == 0 {
				continue
			}
			waiting++
			beyondLimit[rs] = waiting > *limit
		}
	}
	for _, rs := range p.allRS {
		hash := rs.Labels[rollout.PodTemplateHashLabel]
		switch {
		case beyondLimit[rs]:
			if err := p.scale(ctx, rs, 0); err != nil {
				return err
			}
			if err := p.setAnnotation(ctx, rs, AnnotationScaleDownDeadline, ""); err != nil {
				return err
			}
		case rs == p.newRS:
		case hash == activeHash:
			if err := p.setAnnotation(ctx, rs, AnnotationScaleDownDeadline, ""); err != nil {
				return err
			}
			if err := p.scale(ctx, rs, p.replicas); err != nil {
				return err
			}
		case hash == st.StableRS:
			if err := p.scale(ctx, rs, p.replicas); err != nil {
				return err
			}
		case rs.Annotations[AnnotationScaleDownDeadline] != "":
			if err := p.scaleDownAfter(ctx, rs, 0); err != nil {
				return err
			}
		default:
			if err := p.scale(ctx, rs, 0); err != nil {
				return err
			}
		}
	}
	return nil
}

// blueGreenPause manages the BlueGreenPause condition and says whether the
// new revision may be promoted. Without autoPromotionEnabled=false or
// autoPromotionSeconds it always may. Otherwise the rollout pauses once the
// preview pods are ready, and goes on when the pause is cleared (promote),
// when autoPromotionSeconds have passed, or on promote --full.
func (p *pass) blueGreenPause() bool {
	bg := p.ro.Spec.Strategy.BlueGreen
	st := p.status
	if st.PromoteFull {
		rollout.RemovePause(st, v1alpha1.PauseReasonBlueGreenPause)
		return true
	}
	auto := ptr.Deref(bg.AutoPromotionEnabled, true)
	if auto && bg.AutoPromotionSeconds == 0 {
		return true
	}
	cond := rollout.FindPause(st, v1alpha1.PauseReasonBlueGreenPause)
	if cond == nil && st.ControllerPause {
		return true // the pause this controller set was cleared: promoted
	}
	if cond != nil {
		if auto {
			deadline := cond.StartTime.Add(time.Duration(bg.AutoPromotionSeconds) * time.Second)
			if wait := deadline.Sub(p.now); wait > 0 {
				p.requeueAfter(wait)
				return false
			}
			rollout.RemovePause(st, v1alpha1.PauseReasonBlueGreenPause)
			p.event("RolloutResumed", "Rollout resumed after autoPromotionSeconds")
			return true
		}
		return false
	}
	previewReplicas := p.replicas
	if bg.PreviewReplicaCount != nil {
		previewReplicas = min(*bg.PreviewReplicaCount, p.replicas)
	}
	if p.ro.Spec.Paused || !saturated(p.newRS, previewReplicas) {
		return false
	}
	p.addPause(v1alpha1.PauseReasonBlueGreenPause)
	if auto {
		p.requeueAfter(time.Duration(bg.AutoPromotionSeconds) * time.Second)
	}
	return false
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
