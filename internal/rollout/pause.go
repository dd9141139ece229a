package rollout

import (
	"slices"

	"github.com/skiffcd/skiff/api/v1alpha1"
)

// PauseChange is what a pass does to one pause condition.
type PauseChange int

const (
	// PauseKept leaves the condition as it is.
	PauseKept PauseChange = iota
	// PauseAdded pauses the rollout, as the controller: the condition
	// starts now and status.controllerPause is set.
	PauseAdded
	// PauseRemoved ends the pause: the condition goes.
	PauseRemoved
)

// FindPause returns the pause condition of reason, or nil.
func FindPause(st *v1alpha1.RolloutStatus, reason v1alpha1.PauseReason) *v1alpha1.PauseCondition {
	for i := range st.PauseConditions {
		if st.PauseConditions[i].Reason == reason {
			return &st.PauseConditions[i]
		}
	}
	return nil
}

// RemovePause drops the pause condition of reason; no condition left is
// nil, not an empty list.
func RemovePause(st *v1alpha1.RolloutStatus, reason v1alpha1.PauseReason) {
	st.PauseConditions = slices.DeleteFunc(st.PauseConditions, func(c v1alpha1.PauseCondition) bool { return c.Reason == reason })
	if len(st.PauseConditions) == 0 {
		st.PauseConditions = nil
	}
}
