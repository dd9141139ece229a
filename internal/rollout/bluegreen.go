package rollout

import (
	"time"

	"github.com/skiffcd/skiff/api/v1alpha1"
)

// BlueGreenInput is what a blue-green pass read, once it knows the update
// is not aborted: the spec, the status so far, the active Service and the
// new ReplicaSet.
type BlueGreenInput struct {
	Strategy *v1alpha1.BlueGreenStrategy
	Replicas int32 // the Rollout's spec.replicas, default applied
	Paused   bool  // spec.paused
	// Status is the status as the pass has it so far (read only).
	Status *v1alpha1.RolloutStatus
	// Hash is the new revision's pod template hash.
	Hash string
	// ActiveHash is the revision the active Service selects; ActiveOurs
	// says one of the Rollout's ReplicaSets has that hash.
	ActiveHash string
	ActiveOurs bool
	// RollbackWithinWindow says the new revision is a rollback within
	// spec.rollbackWindow.
	RollbackWithinWindow bool
	// New is the new ReplicaSet. MinReadySecondsChanged says its
	// minReadySeconds is not the Rollout's: a scale of it writes even at
	// the same size.
	New                    ReplicaSetCounts
	MinReadySecondsChanged bool
	// PrePromotionBlocked holds the switch (prePromotionAnalysis has not
	// passed); PostPromotionPending holds making the new revision stable.
	PrePromotionBlocked  bool
	PostPromotionPending bool
	Now                  time.Time
}

// BlueGreenStep is what a blue-green pass does, in this order: the
// BlueGreenPause, the new ReplicaSet's size, the switch of the active
// Service, the stable revision.
type BlueGreenStep struct {
	// Pause is what happens to the BlueGreenPause condition; Resumed says
	// it went because autoPromotionSeconds passed.
	Pause   PauseChange
	Resumed bool
	// NewReplicas is the new ReplicaSet's size: previewReplicaCount until
	// the new revision may be promoted, spec.replicas from then on.
	NewReplicas int32
	// Switch moves the active Service to the new revision. OldActiveDeadline
	// is then when the revision it leaves goes down (scaleDownDelaySeconds
	// from now); zero when that revision is none of the Rollout's.
	Switch            bool
	OldActiveDeadline time.Time
	// ActiveSelector is the revision the active Service selects after the pass.
	ActiveSelector string
	// MarkStable makes the new revision the stable one; the pauses end.
	MarkStable bool
	// Requeue asks for a pass RequeueAfter from now (an autoPromotionSeconds
	// deadline).
	Requeue      bool
	RequeueAfter time.Duration
}

// PlanBlueGreen decides a blue-green pass. Without an active revision of
// the Rollout's own there is nothing to protect: the first revision (and
// one that follows a broken selector) goes live as soon as it is
// available, without a pause (fast track); so does a rollback within the
// rollbackWindow. Any other revision is promoted when the BlueGreenPause
// allows it (blueGreenPause) and prePromotionAnalysis passed. The active
// Service switches once the new ReplicaSet runs spec.replicas pods, all
// available, unless the rollout is paused; the new revision becomes stable
// once it is active at full size, and, with postPromotionAnalysis, that
// analysis passed: until then the old revision stays stable (and up), and
// a failed analysis switches back to it.
func PlanBlueGreen(in BlueGreenInput) BlueGreenStep {
	var step BlueGreenStep
	fastTrack := !in.ActiveOurs || in.ActiveHash == in.Hash || in.RollbackWithinWindow
	promote := fastTrack || blueGreenPause(in, &step) && !in.PrePromotionBlocked

	step.NewReplicas = in.Replicas
	if !promote {
		step.NewReplicas = PreviewReplicas(in.Strategy, in.Replicas)
	}
	// A scale that writes leaves the ReplicaSet's status older than its
	// spec: its pods count as available again only once the ReplicaSet
	// controller has seen the scale, on a later pass.
	scaled := in.New
	if scaled.Replicas != step.NewReplicas || in.MinReadySecondsChanged {
		scaled = ReplicaSetCounts{Replicas: step.NewReplicas}
	}
	full := Saturated(&scaled, in.Replicas)

	step.ActiveSelector = in.ActiveHash
	if in.ActiveHash != in.Hash && promote && !in.Paused && full {
		step.Switch, step.ActiveSelector = true, in.Hash
		if in.ActiveOurs {
			delay := DefaultScaleDownDelaySeconds * time.Second
			if s := in.Strategy.ScaleDownDelaySeconds; s != nil {
				delay = time.Duration(*s) * time.Second
			}
			step.OldActiveDeadline = in.Now.Add(delay)
		}
	}
	step.MarkStable = step.ActiveSelector == in.Hash && full && in.Status.StableRS != in.Hash && !in.PostPromotionPending
	return step
}

// blueGreenPause decides the BlueGreenPause condition into step and says
// whether the new revision may be promoted. Without
// autoPromotionEnabled=false or autoPromotionSeconds it always may.
// Otherwise the rollout pauses once the preview pods are all available,
// and goes on when the pause is cleared (promote), when
// autoPromotionSeconds have passed, or on promote --full.
func blueGreenPause(in BlueGreenInput, step *BlueGreenStep) bool {
	bg, st := in.Strategy, in.Status
	if st.PromoteFull {
		step.Pause = PauseRemoved
		return true
	}
	auto := bg.AutoPromotionEnabled == nil || *bg.AutoPromotionEnabled
	if auto && bg.AutoPromotionSeconds == 0 {
		return true
	}
	autoPromotion := time.Duration(bg.AutoPromotionSeconds) * time.Second
	cond := FindPause(st, v1alpha1.PauseReasonBlueGreenPause)
	switch {
	case cond == nil && st.ControllerPause:
		return true // the pause this controller set was cleared: promoted
	case cond != nil && !auto:
		return false
	case cond != nil:
		if wait := cond.StartTime.Add(autoPromotion).Sub(in.Now); wait > 0 {
			step.Requeue, step.RequeueAfter = true, wait
			return false
		}
		step.Pause, step.Resumed = PauseRemoved, true
		return true
	}
	if in.Paused || !Saturated(&in.New, PreviewReplicas(bg, in.Replicas)) {
		return false
	}
	step.Pause = PauseAdded
	if auto {
		step.Requeue, step.RequeueAfter = true, autoPromotion
	}
	return false
}

// PreviewReplicas is how many pods a blue-green revision runs before its
// promotion: previewReplicaCount, at most spec.replicas (replicas).
func PreviewReplicas(bg *v1alpha1.BlueGreenStrategy, replicas int32) int32 {
	if bg.PreviewReplicaCount == nil {
		return replicas
	}
	return min(*bg.PreviewReplicaCount, replicas)
}

// Saturated says rs runs n pods, all of them available (a status older
// than its last scale, which counts no pods, says nothing).
func Saturated(rs *ReplicaSetCounts, n int32) bool {
	return rs != nil && rs.Replicas == n && rs.AvailableReplicas >= n
}

// BlueGreenReplicaSet is what BlueGreenScaleDown needs to know of one of a
// blue-green Rollout's ReplicaSets.
type BlueGreenReplicaSet struct {
	Hash     string // its pod template hash
	Replicas int32  // spec.replicas
	// New says it is the new revision's, which the step sizes.
	New bool
	// HasDeadline says it carries a scale-down-deadline annotation.
	HasDeadline bool
}

// BlueGreenScale is what a blue-green pass does to one ReplicaSet.
type BlueGreenScale int

const (
	// LeaveToStep leaves the new ReplicaSet to the step.
	LeaveToStep BlueGreenScale = iota
	// KeepActive keeps the active revision at full size, without a deadline.
	KeepActive
	// KeepStable keeps the stable revision at full size.
	KeepStable
	// ScaleDownAtDeadline scales the ReplicaSet to 0 at its deadline.
	ScaleDownAtDeadline
	// ScaleDownBeyondLimit scales a ReplicaSet waiting for its deadline
	// to 0 at once, beyond scaleDownDelayRevisionLimit, and drops the deadline.
	ScaleDownBeyondLimit
	// ScaleDown scales the ReplicaSet to 0.
	ScaleDown
)

// BlueGreenScaleDown decides, for each of a blue-green Rollout's
// ReplicaSets (oldest revision first), how the pass sizes it once the
// active Service selects activeHash and stableHash is the stable revision.
// The active revision stays at full size until the switch; every other old
// revision goes away, the one just switched from after its delay.
// scaleDownDelayRevisionLimit (revisionLimit; nil: no limit) bounds how
// many old revisions wait out their delay up: the newest ones do, the
// older go down at once.
func BlueGreenScaleDown(replicaSets []BlueGreenReplicaSet, activeHash, stableHash string, revisionLimit *int32) []BlueGreenScale {
	out := make([]BlueGreenScale, len(replicaSets))
	var waiting int32
	for i := len(replicaSets) - 1; i >= 0; i-- { // newest first
		rs := replicaSets[i]
		switch {
		case rs.New:
			out[i] = LeaveToStep
		case rs.Hash == activeHash:
			out[i] = KeepActive
		case rs.Hash == stableHash:
			out[i] = KeepStable
		case !rs.HasDeadline:
			out[i] = ScaleDown
		default:
			out[i] = ScaleDownAtDeadline
			if rs.Replicas == 0 || revisionLimit == nil {
				continue
			}
			if waiting++; waiting > *revisionLimit {
				out[i] = ScaleDownBeyondLimit
			}
		}
	}
	return out
}
