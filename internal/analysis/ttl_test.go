package analysis

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/skiffcd/skiff/api/v1alpha1"
)

func TestExpiresAt(t *testing.T) {
	done := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	tests := map[string]struct {
		ttl    *v1alpha1.TTLStrategy
		phase  v1alpha1.AnalysisPhase
		want   time.Duration
		wantOK bool
	}{
		"without a ttlStrategy a run is kept": {phase: v1alpha1.AnalysisPhaseSuccessful},
		"a running run is kept":               {ttl: &v1alpha1.TTLStrategy{SecondsAfterCompletion: ptr.To[int32](5)}, phase: v1alpha1.AnalysisPhaseRunning},
		"secondsAfterCompletion applies to any finished run": {
			ttl: &v1alpha1.TTLStrategy{SecondsAfterCompletion: ptr.To[int32](5)}, phase: v1alpha1.AnalysisPhaseInconclusive, want: 5 * time.Second, wantOK: true,
		},
		"secondsAfterSuccess overrides it for a successful run": {
			ttl:   &v1alpha1.TTLStrategy{SecondsAfterCompletion: ptr.To[int32](5), SecondsAfterSuccess: ptr.To[int32](1)},
			phase: v1alpha1.AnalysisPhaseSuccessful, want: time.Second, wantOK: true,
		},
		"secondsAfterFailure overrides it for a failed run": {
			ttl:   &v1alpha1.TTLStrategy{SecondsAfterCompletion: ptr.To[int32](5), SecondsAfterFailure: ptr.To[int32](60)},
			phase: v1alpha1.AnalysisPhaseFailed, want: time.Minute, wantOK: true,
		},
		"secondsAfterFailure applies to an errored run": {
			ttl: &v1alpha1.TTLStrategy{SecondsAfterFailure: ptr.To[int32](2)}, phase: v1alpha1.AnalysisPhaseError, want: 2 * time.Second, wantOK: true,
		},
		"secondsAfterSuccess alone keeps a failed run": {
			ttl: &v1alpha1.TTLStrategy{SecondsAfterSuccess: ptr.To[int32](2)}, phase: v1alpha1.AnalysisPhaseFailed,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			completedAt := metav1.NewTime(done)
			run := &v1alpha1.AnalysisRun{Spec: v1alpha1.AnalysisRunSpec{TTLStrategy: tc.ttl},
				Status: v1alpha1.AnalysisRunStatus{Phase: tc.phase, CompletedAt: &completedAt}}
			at, ok := ExpiresAt(run)
			if ok != tc.wantOK || (ok && at.Sub(done) != tc.want) {
				t.Errorf("ExpiresAt = %s after completion, %v; want %s, %v", at.Sub(done), ok, tc.want, tc.wantOK)
			}
		})
	}
}
