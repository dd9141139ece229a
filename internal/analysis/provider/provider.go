// Package provider takes the measurements of AnalysisRun metrics: a
// Prometheus query, a web request, or a Kubernetes Job. Every call is
// bounded by a timeout, and a bad configuration becomes an Error
// measurement with a clear message, never a hang.
package provider

import (
	"context"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/skiffcd/skiff/api/v1alpha1"
	"github.com/skiffcd/skiff/internal/analysis"
)

// Provider measures one kind of metric. The metric it gets has its
// {{args.x}} already substituted.
type Provider interface {
	// Run starts a measurement; it returns it completed, or Running with
	// ResumeAt when the provider must be polled again (a Job).
	Run(ctx context.Context, run *v1alpha1.AnalysisRun, metric v1alpha1.Metric) v1alpha1.Measurement
	// Resume polls a Running measurement.
	Resume(ctx context.Context, run *v1alpha1.AnalysisRun, metric v1alpha1.Metric, m v1alpha1.Measurement) v1alpha1.Measurement
	// Terminate stops a Running measurement because the run is ending.
	Terminate(ctx context.Context, run *v1alpha1.AnalysisRun, metric v1alpha1.Metric, m v1alpha1.Measurement) v1alpha1.Measurement
}

// Factory hands out the provider of a metric.
type Factory struct {
	// Client creates and reads Jobs for job metrics.
	Client client.Client
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// JobPoll is how often a running Job is checked; default 10 s (Job
	// events wake the controller earlier).
	JobPoll time.Duration
}

func (f *Factory) now() time.Time {
	if f.Now != nil {
		return f.Now()
	}
	return time.Now()
}

// For returns the provider that measures metric, or an error when the
// metric names none or one Skiff does not implement.
func (f *Factory) For(metric v1alpha1.Metric) (Provider, error) {
	p := metric.Provider
	switch {
	case p.Prometheus != nil:
		return &Prometheus{Now: f.now}, nil
	case p.Web != nil:
		return &Web{Now: f.now}, nil
	case p.Job != nil:
		poll := f.JobPoll
		if poll == 0 {
			poll = 10 * time.Second
		}
		return &Job{Client: f.Client, Now: f.now, Poll: poll}, nil
	case len(p.Plugin) > 0:
		return nil, fmt.Errorf("metric %q: plugin providers are not supported", metric.Name)
	}
	return nil, fmt.Errorf("metric %q has no supported provider (prometheus, web or job)", metric.Name)
}

// started is a new measurement started at now.
func started(now time.Time) v1alpha1.Measurement {
	t := metav1.NewTime(now)
	return v1alpha1.Measurement{Phase: v1alpha1.AnalysisPhaseRunning, StartedAt: &t}
}

// judge completes a measurement of a value by the metric's conditions.
func judge(m v1alpha1.Measurement, metric v1alpha1.Metric, value string, result any, now time.Time) v1alpha1.Measurement {
	m.Value = value
	phase, err := analysis.EvaluateResult(metric, result)
	if err != nil {
		return analysis.Finish(m, v1alpha1.AnalysisPhaseError, err.Error(), now)
	}
	return analysis.Finish(m, phase, "", now)
}

// noResume is Resume and Terminate for providers whose measurements complete at once.
type noResume struct{}

func (noResume) Resume(_ context.Context, _ *v1alpha1.AnalysisRun, _ v1alpha1.Metric, m v1alpha1.Measurement) v1alpha1.Measurement {
	return m
}

func (noResume) Terminate(_ context.Context, _ *v1alpha1.AnalysisRun, _ v1alpha1.Metric, m v1alpha1.Measurement) v1alpha1.Measurement {
	return m
}
