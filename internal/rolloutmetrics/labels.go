// Package rolloutmetrics serves the metrics of Rollouts and AnalysisRuns
// with Argo Rollouts' names, types, labels and buckets (its
// controller/metrics), so Argo Rollouts' dashboards and alerts work
// unchanged: info gauges read from the cache at each scrape, so a deleted
// object's series go with it, and reconcile histograms and error counters
// the controllers observe. Experiments have none: Skiff has no
// Experiments.
package rolloutmetrics

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/skiffcd/skiff/api/v1alpha1"
	"github.com/skiffcd/skiff/internal/rollout"
)

// Rollout phases of rollout_info and rollout_phase: Argo Rollouts' reading
// of the Progressing and InvalidSpec conditions, not status.phase.
const (
	PhaseProgressing = "Progressing"
	PhaseCompleted   = "Completed"
	PhasePaused      = "Paused"
	PhaseTimeout     = "Timeout"
	PhaseError       = "Error"
	PhaseAbort       = "Abort"
	PhaseInvalidSpec = "InvalidSpec"
)

// rolloutPhases are the phases rollout_phase has one series each of.
var rolloutPhases = []string{PhaseCompleted, PhaseProgressing, PhasePaused, PhaseTimeout, PhaseError, PhaseAbort}

// progressingPhases maps a Progressing condition's reason to its phase.
var progressingPhases = map[rollout.ConditionReason]string{
	rollout.ReasonNewReplicaSetAvailable:  PhaseCompleted,
	rollout.ReasonRolloutPaused:           PhasePaused,
	"ReplicaSetCreateError":               PhaseError,
	rollout.ReasonProgressDeadlineExceeds: PhaseTimeout,
	rollout.ReasonRolloutAborted:          PhaseAbort,
}

// RolloutPhase is ro's phase label: InvalidSpec while the spec is invalid,
// else the phase of its Progressing condition's reason, else Progressing.
func RolloutPhase(ro *v1alpha1.Rollout) string {
	if c := rollout.GetCondition(&ro.Status, v1alpha1.InvalidSpec); c != nil && c.Status == corev1.ConditionTrue {
		return PhaseInvalidSpec
	}
	if c := rollout.GetCondition(&ro.Status, v1alpha1.RolloutProgressing); c != nil {
		if phase, ok := progressingPhases[rollout.ConditionReason(c.Reason)]; ok {
			return phase
		}
	}
	return PhaseProgressing
}

// Strategy is ro's strategy label: blueGreen, canary or none.
func Strategy(ro *v1alpha1.Rollout) string {
	switch {
	case ro.Spec.Strategy.BlueGreen != nil:
		return "blueGreen"
	case ro.Spec.Strategy.Canary != nil:
		return "canary"
	}
	return "none"
}

// TrafficRouter is ro's traffic_router label. Argo Rollouts names only its
// built-in routers there and leaves plugin routers (Skiff's only kind)
// empty, as this does.
func TrafficRouter(*v1alpha1.Rollout) string { return "" }

// MetricType is the type label of an analysis metric: its provider as
// Argo Rollouts names it.
func MetricType(metric v1alpha1.Metric) string {
	p := metric.Provider
	switch {
	case p.Prometheus != nil:
		return "Prometheus"
	case p.Web != nil:
		return "Web"
	case p.Job != nil:
		return "Job"
	case len(p.Plugin) > 0:
		return "RpcPlugin"
	}
	return "Unknown Provider"
}

// metricPhase is the phase of the metric named name in run's status;
// Pending until it has a result.
func metricPhase(run *v1alpha1.AnalysisRun, name string) v1alpha1.AnalysisPhase {
	for _, r := range run.Status.MetricResults {
		if r.Name == name && r.Phase != "" {
			return r.Phase
		}
	}
	return v1alpha1.AnalysisPhasePending
}
