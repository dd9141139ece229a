package analysis

import (
	"fmt"
	"path"
	"regexp"

	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/skiffcd/skiff/api/v1alpha1"
)

// Defaults Argo Rollouts applies to unset limits.
const (
	DefaultFailureLimit          = 0
	DefaultInconclusiveLimit     = 0
	DefaultConsecutiveErrorLimit = 4
	// DefaultMeasurementRetention is how many measurements a metric keeps.
	DefaultMeasurementRetention = 10
)

// limit reads an int-or-string limit; a string that is not a number (a
// {{args.x}} left unresolved) counts as the default.
func limit(v *intstr.IntOrString, def int32) int32 {
	if v == nil {
		return def
	}
	if v.Type == intstr.String {
		parsed := intstr.Parse(v.StrVal)
		if parsed.Type == intstr.String {
			return def
		}
		return parsed.IntVal
	}
	return v.IntVal
}

// EffectiveCount is how many measurements a metric takes: its count, else
// one when it has no interval, else nil (measured until the run ends).
func EffectiveCount(metric v1alpha1.Metric) *int32 {
	if metric.Count != nil {
		n := limit(metric.Count, 0)
		return &n
	}
	if metric.Interval == "" {
		one := int32(1)
		return &one
	}
	return nil
}

// limitBreach reports whether the counts of a metric pass one of its limits.
// Error beats Inconclusive beats Failed when several are passed, as in Argo
// Rollouts.
func limitBreach(metric v1alpha1.Metric, result v1alpha1.MetricResult) (v1alpha1.AnalysisPhase, string) {
	var phase v1alpha1.AnalysisPhase
	var message string
	if failureLimit := limit(metric.FailureLimit, DefaultFailureLimit); failureLimit >= 0 && result.Failed > failureLimit {
		phase, message = v1alpha1.AnalysisPhaseFailed, fmt.Sprintf("failed (%d) > failureLimit (%d)", result.Failed, failureLimit)
	}
	if inconclusiveLimit := limit(metric.InconclusiveLimit, DefaultInconclusiveLimit); result.Inconclusive > inconclusiveLimit {
		phase, message = v1alpha1.AnalysisPhaseInconclusive, fmt.Sprintf("inconclusive (%d) > inconclusiveLimit (%d)", result.Inconclusive, inconclusiveLimit)
	}
	if errorLimit := limit(metric.ConsecutiveErrorLimit, DefaultConsecutiveErrorLimit); result.ConsecutiveError > errorLimit {
		phase, message = v1alpha1.AnalysisPhaseError, fmt.Sprintf("consecutiveErrors (%d) > consecutiveErrorLimit (%d)", result.ConsecutiveError, errorLimit)
	}
	return phase, message
}

// MetricPhase is the phase of one metric from its measurements and counts.
// terminating means the run is ending (terminate requested or another
// metric failed): a metric that has not finished counts as Successful then.
func MetricPhase(metric v1alpha1.Metric, result v1alpha1.MetricResult, terminating bool) (v1alpha1.AnalysisPhase, string) {
	if result.Phase.Completed() {
		return result.Phase, result.Message
	}
	if len(result.Measurements) == 0 {
		if terminating {
			return v1alpha1.AnalysisPhaseSuccessful, "Metric Terminated"
		}
		return v1alpha1.AnalysisPhasePending, ""
	}
	if last := result.Measurements[len(result.Measurements)-1]; !last.Phase.Completed() {
		return v1alpha1.AnalysisPhaseRunning, ""
	}
	if phase, message := limitBreach(metric, result); phase != "" {
		return phase, message
	}
	successLimit := limit(metric.ConsecutiveSuccessLimit, 0)
	if successLimit > 0 && result.ConsecutiveSuccess >= successLimit {
		return v1alpha1.AnalysisPhaseSuccessful, fmt.Sprintf("consecutiveSuccess (%d) reached consecutiveSuccessLimit (%d)", result.ConsecutiveSuccess, successLimit)
	}
	if count := EffectiveCount(metric); count != nil && result.Count >= *count {
		if successLimit > 0 {
			// The metric asked for a streak of successes and ran out of measurements first.
			return v1alpha1.AnalysisPhaseFailed, fmt.Sprintf("count (%d) reached without consecutiveSuccessLimit (%d)", *count, successLimit)
		}
		return v1alpha1.AnalysisPhaseSuccessful, ""
	}
	if terminating {
		return v1alpha1.AnalysisPhaseSuccessful, "Metric Terminated"
	}
	return v1alpha1.AnalysisPhaseRunning, ""
}

// phaseRank orders phases from best to worst.
var phaseRank = map[v1alpha1.AnalysisPhase]int{
	v1alpha1.AnalysisPhaseSuccessful:   0,
	v1alpha1.AnalysisPhaseRunning:      1,
	v1alpha1.AnalysisPhasePending:      2,
	v1alpha1.AnalysisPhaseInconclusive: 3,
	v1alpha1.AnalysisPhaseError:        4,
	v1alpha1.AnalysisPhaseFailed:       5,
}

// IsWorse reports whether candidate is worse than current.
func IsWorse(current, candidate v1alpha1.AnalysisPhase) bool {
	return phaseRank[candidate] > phaseRank[current]
}

// IsTerminating reports whether a run is ending: terminate was requested or a
// metric that counts (not dry-run) completed Failed, Error or Inconclusive.
func IsTerminating(run *v1alpha1.AnalysisRun) bool {
	if run.Spec.Terminate {
		return true
	}
	for _, res := range run.Status.MetricResults {
		switch res.Phase {
		case v1alpha1.AnalysisPhaseFailed, v1alpha1.AnalysisPhaseError, v1alpha1.AnalysisPhaseInconclusive:
			if !res.DryRun {
				return true
			}
		}
	}
	return false
}

// IsDryRun reports whether a metric is dry-run: named (or matched by a glob
// such as "*") in spec.dryRun.
func IsDryRun(dryRun []v1alpha1.DryRun, metricName string) bool {
	for _, d := range dryRun {
		if ok, _ := path.Match(d.MetricName, metricName); ok || d.MetricName == metricName {
			return true
		}
	}
	return false
}

// RetentionLimit is how many measurements a metric keeps: the first
// spec.measurementRetention entry whose metricName (a regular expression,
// as in Argo Rollouts) matches, else the default.
func RetentionLimit(retention []v1alpha1.MeasurementRetention, metricName string) int {
	for _, r := range retention {
		re, err := regexp.Compile("^(?:" + r.MetricName + ")$")
		if err == nil && re.MatchString(metricName) && r.Limit > 0 {
			return int(r.Limit)
		}
	}
	return DefaultMeasurementRetention
}

// TrimMeasurements keeps the last limit measurements.
func TrimMeasurements(measurements []v1alpha1.Measurement, limit int) []v1alpha1.Measurement {
	if len(measurements) <= limit {
		return measurements
	}
	return append([]v1alpha1.Measurement(nil), measurements[len(measurements)-limit:]...)
}

// RunVerdict is the outcome of assessing a run.
type RunVerdict struct {
	Phase   v1alpha1.AnalysisPhase
	Message string
	// MetricPhases and MetricMessages are per metric name.
	MetricPhases   map[string]v1alpha1.AnalysisPhase
	MetricMessages map[string]string
	Summary        v1alpha1.RunSummary
	DryRunSummary  *v1alpha1.RunSummary
}

// AssessRun decides every metric's phase and the run's: Running until every
// metric completed, then the worst phase among metrics that count. A run
// that is terminating (terminate requested or a counting metric failed) ends
// at once with the worst phase so far, Successful if nothing failed.
// Dry-run metrics are summarised separately and never change the run phase.
func AssessRun(run *v1alpha1.AnalysisRun) RunVerdict {
	v := RunVerdict{
		MetricPhases:   map[string]v1alpha1.AnalysisPhase{},
		MetricMessages: map[string]string{},
		Summary:        v1alpha1.RunSummary{Count: 0},
	}
	results := map[string]v1alpha1.MetricResult{}
	for _, r := range run.Status.MetricResults {
		results[r.Name] = r
	}
	terminating := IsTerminating(run)
	var worst v1alpha1.AnalysisPhase
	var worstMessage string
	everythingCompleted := true
	for _, metric := range run.Spec.Metrics {
		dryRun := IsDryRun(run.Spec.DryRun, metric.Name)
		summary := &v.Summary
		if dryRun {
			if v.DryRunSummary == nil {
				v.DryRunSummary = &v1alpha1.RunSummary{}
			}
			summary = v.DryRunSummary
		}
		summary.Count++
		result, ok := results[metric.Name]
		if !ok {
			result = v1alpha1.MetricResult{Name: metric.Name, Phase: v1alpha1.AnalysisPhasePending}
		}
		phase, message := MetricPhase(metric, result, terminating)
		v.MetricPhases[metric.Name], v.MetricMessages[metric.Name] = phase, message
		if !phase.Completed() {
			everythingCompleted = false
			continue
		}
		switch phase {
		case v1alpha1.AnalysisPhaseSuccessful:
			summary.Successful++
		case v1alpha1.AnalysisPhaseFailed:
			summary.Failed++
		case v1alpha1.AnalysisPhaseInconclusive:
			summary.Inconclusive++
		case v1alpha1.AnalysisPhaseError:
			summary.Error++
		}
		if dryRun {
			continue
		}
		if worst == "" || IsWorse(worst, phase) {
			worst = phase
			// A metric completed on an earlier pass carries its last
			// measurement's message; the limit it passed is recomputed.
			if _, breach := limitBreach(metric, result); breach != "" {
				message = breach
			}
			if phase != v1alpha1.AnalysisPhaseSuccessful && message != "" {
				worstMessage = fmt.Sprintf("Metric %q assessed %s due to %s", metric.Name, phase, message)
				if last := lastMessage(result); last != "" {
					worstMessage += ": " + last
				}
			}
		}
	}
	switch {
	case terminating:
		if worst == "" {
			worst = v1alpha1.AnalysisPhaseSuccessful
		}
		v.Phase = worst
		v.Message = worstMessage
		if run.Spec.Terminate && worstMessage == "" {
			v.Message = "Run Terminated"
		}
	case !everythingCompleted:
		v.Phase = v1alpha1.AnalysisPhaseRunning
	case worst == "":
		// Only dry-run metrics: nothing can fail the run.
		v.Phase = v1alpha1.AnalysisPhaseSuccessful
	default:
		v.Phase, v.Message = worst, worstMessage
	}
	return v
}

func lastMessage(result v1alpha1.MetricResult) string {
	for i := len(result.Measurements) - 1; i >= 0; i-- {
		if m := result.Measurements[i].Message; m != "" {
			return m
		}
	}
	return ""
}
