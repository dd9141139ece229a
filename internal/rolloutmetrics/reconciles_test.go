package rolloutmetrics

import (
	"errors"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// count is how many series vec holds.
func count(vec prometheus.Collector) int {
	ch := make(chan prometheus.Metric, 64)
	vec.Collect(ch)
	close(ch)
	return len(ch)
}

func TestReconcilesTimePassesCountErrorsAndForgetDeletedObjects(t *testing.T) {
	tests := map[string]struct {
		errs                      []error
		forget                    bool
		wantHistograms, wantError int
	}{
		"a pass without error is timed and not counted as an error": {
			errs: []error{nil}, wantHistograms: 1},
		"a failed pass is counted as an error": {
			errs: []error{nil, errors.New("conflict")}, wantHistograms: 1, wantError: 1},
		"a deleted object's series go": {
			errs: []error{errors.New("conflict")}, forget: true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			r := newReconciles("test_reconcile", "test")
			key := client.ObjectKey{Namespace: "web", Name: "shop"}
			for _, err := range tc.errs {
				r.Observe(key, 20*time.Millisecond, err)
			}
			if tc.forget {
				r.Forget(key)
			}
			if got := count(r.seconds); got != tc.wantHistograms {
				t.Errorf("%d histograms, want %d", got, tc.wantHistograms)
			}
			if got := count(r.errors); got != tc.wantError {
				t.Errorf("%d error series, want %d", got, tc.wantError)
			}
		})
	}
}
