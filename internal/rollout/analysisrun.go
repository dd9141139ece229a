package rollout

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/skiffcd/skiff/api/v1alpha1"
	"github.com/skiffcd/skiff/internal/analysis"
)

// RunType is the kind of AnalysisRun a Rollout starts, the value of its
// rollout-type label.
type RunType string

// Run types and the labels of AnalysisRuns, spelled as Argo Rollouts does
// so its tools find the runs.
const (
	RunTypeBackground    RunType = "Background"
	RunTypeStep          RunType = "Step"
	RunTypePrePromotion  RunType = "PrePromotion"
	RunTypePostPromotion RunType = "PostPromotion"

	RunTypeLabel      = "rollout-type"
	RunStepIndexLabel = "step-index"
)

// Default AnalysisRun history limits of spec.analysis.
const (
	DefaultSuccessfulRunHistoryLimit   = 5
	DefaultUnsuccessfulRunHistoryLimit = 5
)

// RunName names an AnalysisRun as Argo Rollouts does:
// <rollout>-<pod hash>-<revision>, then "-pre", "-post" or "-<step index>"
// (nothing for a background run).
func RunName(rolloutName, podHash string, revision int64, runType RunType, stepIndex int32) string {
	parts := []string{rolloutName, podHash, strconv.FormatInt(revision, 10)}
	switch runType {
	case RunTypePrePromotion:
		parts = append(parts, "pre")
	case RunTypePostPromotion:
		parts = append(parts, "post")
	case RunTypeStep:
		parts = append(parts, strconv.Itoa(int(stepIndex)))
	}
	return strings.Join(parts, "-")
}

// RunLabels are the labels of a new AnalysisRun: the pod hash, the run type
// (and step index), the run metadata of the Rollout's analysis, and the
// Rollout's selector labels, in that order of precedence from last to first.
func RunLabels(podHash string, runType RunType, stepIndex int32, extra, selector map[string]string) map[string]string {
	labels := map[string]string{PodTemplateHashLabel: podHash, RunTypeLabel: string(runType)}
	if runType == RunTypeStep {
		labels[RunStepIndexLabel] = strconv.Itoa(int(stepIndex))
	}
	for k, v := range extra {
		labels[k] = v
	}
	for k, v := range selector {
		labels[k] = v
	}
	return labels
}

// RunArgs turns the args of a Rollout's analysis into AnalysisRun args:
// podTemplateHashValue Stable or Latest becomes that revision's hash, a
// fieldRef is read from the Rollout; plain values pass as they are.
func RunArgs(args []v1alpha1.AnalysisRunArgument, stableHash, latestHash string, ro *v1alpha1.Rollout) ([]v1alpha1.Argument, error) {
	out := make([]v1alpha1.Argument, 0, len(args))
	for _, arg := range args {
		a := v1alpha1.Argument{Name: arg.Name}
		switch {
		case arg.Value != nil:
			a.Value = arg.Value.DeepCopy()
		case arg.ValueFrom != nil && arg.ValueFrom.PodTemplateHashValue != nil:
			switch *arg.ValueFrom.PodTemplateHashValue {
			case "Stable":
				a.Value = v1alpha1.NewAnyString(stableHash)
			case "Latest":
				a.Value = v1alpha1.NewAnyString(latestHash)
			default:
				return nil, fmt.Errorf("args.%s.valueFrom.podTemplateHashValue: Invalid value: %q: must be Stable or Latest", arg.Name, *arg.ValueFrom.PodTemplateHashValue)
			}
		case arg.ValueFrom != nil && arg.ValueFrom.FieldRef != nil:
			v, err := analysis.ResolveFieldRef(ro, arg.ValueFrom.FieldRef.FieldPath)
			if err != nil {
				return nil, fmt.Errorf("args.%s: %w", arg.Name, err)
			}
			a.Value = v1alpha1.NewAnyString(v)
		}
		out = append(out, a)
	}
	return out, nil
}

// NeedsNewRun says whether a Rollout must start a fresh AnalysisRun in
// place of current: when there is none, and after a promote cleared the
// pause an Inconclusive run caused (the analysis runs again), as Argo
// Rollouts does. A retry after an abort drops the current runs before.
func NeedsNewRun(current *v1alpha1.AnalysisRun, st *v1alpha1.RolloutStatus) bool {
	if current == nil {
		return true
	}
	return current.Status.Phase == v1alpha1.AnalysisPhaseInconclusive && st.ControllerPause &&
		!hasPause(st, v1alpha1.PauseReasonInconclusiveAnalysis) &&
		!hasPause(st, v1alpha1.PauseReasonCanaryPauseStep) &&
		!hasPause(st, v1alpha1.PauseReasonBlueGreenPause)
}

func hasPause(st *v1alpha1.RolloutStatus, reason v1alpha1.PauseReason) bool {
	for _, c := range st.PauseConditions {
		if c.Reason == reason {
			return true
		}
	}
	return false
}

// RunsToDelete picks the finished runs beyond the history limits among
// runs that are no longer current: the newest successful and unsuccessful
// ones are kept, running ones always.
func RunsToDelete(runs []*v1alpha1.AnalysisRun, successfulLimit, unsuccessfulLimit int32) []*v1alpha1.AnalysisRun {
	sorted := slices.Clone(runs)
	slices.SortStableFunc(sorted, func(a, b *v1alpha1.AnalysisRun) int {
		return b.CreationTimestamp.Compare(a.CreationTimestamp.Time) // newest first
	})
	var successful, unsuccessful int32
	var out []*v1alpha1.AnalysisRun
	for _, run := range sorted {
		switch {
		case !run.Status.Phase.Completed():
		case run.Status.Phase == v1alpha1.AnalysisPhaseSuccessful:
			successful++
			if successful > successfulLimit {
				out = append(out, run)
			}
		default:
			unsuccessful++
			if unsuccessful > unsuccessfulLimit {
				out = append(out, run)
			}
		}
	}
	return out
}

// BeforeStartingStep says whether a canary has not reached the step its
// background analysis starts at.
func BeforeStartingStep(canary *v1alpha1.CanaryStrategy, currentStep *int32) bool {
	if canary.Analysis == nil || canary.Analysis.StartingStep == nil {
		return false
	}
	return currentStep == nil || *currentStep < *canary.Analysis.StartingStep
}
