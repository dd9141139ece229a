package analysis

import (
	"time"

	"github.com/skiffcd/skiff/api/v1alpha1"
)

// ExpiresAt is when a finished run is deleted by its ttlStrategy:
// secondsAfterSuccess for a Successful run, secondsAfterFailure for a Failed
// or Error one, else secondsAfterCompletion. ok is false when the run is
// not finished or keeps forever.
func ExpiresAt(run *v1alpha1.AnalysisRun) (at time.Time, ok bool) {
	ttl := run.Spec.TTLStrategy
	if ttl == nil || !run.Status.Phase.Completed() || run.Status.CompletedAt == nil {
		return time.Time{}, false
	}
	seconds := ttl.SecondsAfterCompletion
	switch run.Status.Phase {
	case v1alpha1.AnalysisPhaseSuccessful:
		if ttl.SecondsAfterSuccess != nil {
			seconds = ttl.SecondsAfterSuccess
		}
	case v1alpha1.AnalysisPhaseFailed, v1alpha1.AnalysisPhaseError:
		if ttl.SecondsAfterFailure != nil {
			seconds = ttl.SecondsAfterFailure
		}
	}
	if seconds == nil {
		return time.Time{}, false
	}
	return run.Status.CompletedAt.Add(time.Duration(*seconds) * time.Second), true
}
