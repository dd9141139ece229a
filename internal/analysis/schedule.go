package analysis

import (
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/skiffcd/skiff/api/v1alpha1"
)

// DefaultErrorRetryInterval is how soon a metric without a shorter interval
// is measured again after an Error, as in Argo Rollouts.
const DefaultErrorRetryInterval = 10 * time.Second

// Action is what a metric needs now.
type Action int

// Actions a metric may need.
const (
	// Wait: nothing is due yet (or the metric is done); see Step.After.
	Wait Action = iota
	// Measure: take a new measurement.
	Measure
	// Resume: poll the in-flight measurement (a Job) again.
	Resume
)

// Step is the scheduling decision for one metric.
type Step struct {
	Action Action
	// After is how long until the metric needs attention again; zero when
	// nothing is scheduled (completed metrics, terminating runs).
	After time.Duration
}

// NextStep decides whether a metric is measured now, its in-flight
// measurement resumed, or how long until either. errorRetry replaces
// DefaultErrorRetryInterval when positive.
func NextStep(metric v1alpha1.Metric, result *v1alpha1.MetricResult, runStarted, now time.Time, terminating bool, errorRetry time.Duration) (Step, error) {
	if result != nil && result.Phase.Completed() {
		return Step{}, nil
	}
	var last *v1alpha1.Measurement
	if result != nil && len(result.Measurements) > 0 {
		last = &result.Measurements[len(result.Measurements)-1]
	}
	if last != nil && last.FinishedAt == nil {
		if last.ResumeAt != nil && last.ResumeAt.After(now) {
			return Step{Action: Wait, After: last.ResumeAt.Sub(now)}, nil
		}
		return Step{Action: Resume}, nil
	}
	if terminating {
		return Step{}, nil
	}
	if last == nil {
		delay, err := parseDuration(metric.InitialDelay, "initialDelay")
		if err != nil {
			return Step{}, err
		}
		if due := runStarted.Add(delay); due.After(now) {
			return Step{Action: Wait, After: due.Sub(now)}, nil
		}
		return Step{Action: Measure}, nil
	}
	interval, err := parseDuration(metric.Interval, "interval")
	if err != nil {
		return Step{}, err
	}
	if last.Phase == v1alpha1.AnalysisPhaseError {
		retry := errorRetry
		if retry <= 0 {
			retry = DefaultErrorRetryInterval
		}
		if interval == 0 || retry < interval {
			interval = retry
		}
	}
	if due := last.FinishedAt.Add(interval); due.After(now) {
		return Step{Action: Wait, After: due.Sub(now)}, nil
	}
	return Step{Action: Measure}, nil
}

func parseDuration(s v1alpha1.DurationString, field string) (time.Duration, error) {
	if s == "" {
		return 0, nil
	}
	d, err := time.ParseDuration(string(s))
	if err != nil {
		return 0, fmt.Errorf("invalid %s %q: %w", field, s, err)
	}
	return d, nil
}

// Record adds a measurement to a metric's result, or replaces the in-flight
// one it resumes, and updates the counts once it completed. Error
// measurements do not count toward count, so a metric keeps retrying until
// consecutiveErrorLimit.
func Record(result *v1alpha1.MetricResult, m v1alpha1.Measurement, resumed bool) {
	if resumed && len(result.Measurements) > 0 {
		result.Measurements[len(result.Measurements)-1] = m
	} else {
		result.Measurements = append(result.Measurements, m)
	}
	if !m.Phase.Completed() {
		return
	}
	switch m.Phase {
	case v1alpha1.AnalysisPhaseSuccessful:
		result.Count++
		result.Successful++
		result.ConsecutiveError = 0
		result.ConsecutiveSuccess++
	case v1alpha1.AnalysisPhaseFailed:
		result.Count++
		result.Failed++
		result.ConsecutiveError = 0
		result.ConsecutiveSuccess = 0
	case v1alpha1.AnalysisPhaseInconclusive:
		result.Count++
		result.Inconclusive++
		result.ConsecutiveError = 0
		result.ConsecutiveSuccess = 0
	case v1alpha1.AnalysisPhaseError:
		result.Error++
		result.ConsecutiveError++
		result.ConsecutiveSuccess = 0
	}
}

// Finish completes a measurement at now with phase and message.
func Finish(m v1alpha1.Measurement, phase v1alpha1.AnalysisPhase, message string, now time.Time) v1alpha1.Measurement {
	t := metav1.NewTime(now)
	m.Phase, m.Message, m.FinishedAt, m.ResumeAt = phase, message, &t, nil
	if m.StartedAt == nil {
		m.StartedAt = &t
	}
	return m
}
