package argocdcm

import (
	"strings"
	"testing"
	"time"
)

func TestParseApplicationTracking(t *testing.T) {
	tests := map[string]struct {
		data    map[string]string
		want    [2]string // method, label key
		wantErr string
	}{
		"an empty argocd-cm tracks by annotation with Argo CD's label": {
			want: [2]string{"annotation", "app.kubernetes.io/instance"},
		},
		"label tracking": {
			data: map[string]string{"application.resourceTrackingMethod": "label"},
			want: [2]string{"label", "app.kubernetes.io/instance"},
		},
		"annotation+label tracking with a custom label, spaces trimmed": {
			data: map[string]string{"application.resourceTrackingMethod": " annotation+label\n", "application.instanceLabelKey": "argocd.argoproj.io/instance"},
			want: [2]string{"annotation+label", "argocd.argoproj.io/instance"},
		},
		"an unknown method is one error and the default applies": {
			data:    map[string]string{"application.resourceTrackingMethod": "labels", "application.instanceLabelKey": "example.com/app"},
			want:    [2]string{"annotation", "example.com/app"},
			wantErr: `application.resourceTrackingMethod: "labels" is not a tracking method`,
		},
		"a key that is no label key is one error and the default applies": {
			data:    map[string]string{"application.resourceTrackingMethod": "label", "application.instanceLabelKey": "not a/label/key"},
			want:    [2]string{"label", "app.kubernetes.io/instance"},
			wantErr: `application.instanceLabelKey: "not a/label/key" is not a label key`,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			s, errs := Parse(tc.data)
			if got := [2]string{s.Application.TrackingMethod, s.Application.InstanceLabelKey}; got != tc.want {
				t.Errorf("tracking %v, want %v", got, tc.want)
			}
			switch {
			case tc.wantErr == "" && len(errs) > 0:
				t.Errorf("errors %v, want none", errs)
			case tc.wantErr != "" && (len(errs) != 1 || !strings.Contains(errs[0].Error(), tc.wantErr)):
				t.Errorf("errors %v, want one with %q", errs, tc.wantErr)
			}
		})
	}
}

func TestParseApplicationTimeouts(t *testing.T) {
	threeMinutes, off := 3*time.Minute, time.Duration(0)
	tests := map[string]struct {
		data     map[string]string
		want     *time.Duration
		wantHard time.Duration
		wantErr  string
	}{
		"unset: the controller's own period, no hard refreshes": {},
		"both set": {
			data: map[string]string{"timeout.reconciliation": "3m", "timeout.hard.reconciliation": "1h"},
			want: &threeMinutes, wantHard: time.Hour,
		},
		"zero turns periodic polls off": {
			data: map[string]string{"timeout.reconciliation": "0s"}, want: &off,
		},
		"a number without a unit is one error and the default applies": {
			data: map[string]string{"timeout.reconciliation": "180"}, wantErr: `timeout.reconciliation: "180" is not a duration`,
		},
		"a negative hard period is one error": {
			data: map[string]string{"timeout.hard.reconciliation": "-5m"}, wantErr: `timeout.hard.reconciliation: "-5m" is negative`,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			s, errs := Parse(tc.data)
			got := s.Application.Reconciliation
			if (got == nil) != (tc.want == nil) || got != nil && *got != *tc.want || s.Application.HardReconciliation != tc.wantHard {
				t.Errorf("reconciliation %v, hard %v; want %v, %v", got, s.Application.HardReconciliation, tc.want, tc.wantHard)
			}
			switch {
			case tc.wantErr == "" && len(errs) > 0:
				t.Errorf("errors %v, want none", errs)
			case tc.wantErr != "" && (len(errs) != 1 || !strings.Contains(errs[0].Error(), tc.wantErr)):
				t.Errorf("errors %v, want one with %q", errs, tc.wantErr)
			}
		})
	}
}
