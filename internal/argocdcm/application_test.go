package argocdcm

import (
	"strings"
	"testing"

	"github.com/skiffcd/skiff/internal/clustercache"
)

func TestParseApplicationTracking(t *testing.T) {
	tests := map[string]struct {
		data    map[string]string
		want    clustercache.Tracking
		wantErr string
	}{
		"an empty argocd-cm tracks by annotation with Argo CD's label": {
			want: clustercache.Tracking{Mode: clustercache.TrackingAnnotationMode, LabelKey: clustercache.InstanceLabel},
		},
		"label tracking": {
			data: map[string]string{"application.resourceTrackingMethod": "label"},
			want: clustercache.Tracking{Mode: clustercache.TrackingLabelMode, LabelKey: clustercache.InstanceLabel},
		},
		"annotation+label tracking with a custom label, spaces trimmed": {
			data: map[string]string{"application.resourceTrackingMethod": " annotation+label\n", "application.instanceLabelKey": "argocd.argoproj.io/instance"},
			want: clustercache.Tracking{Mode: clustercache.TrackingAnnotationAndLabelMode, LabelKey: "argocd.argoproj.io/instance"},
		},
		"an unknown method is one error and the default applies": {
			data:    map[string]string{"application.resourceTrackingMethod": "labels", "application.instanceLabelKey": "example.com/app"},
			want:    clustercache.Tracking{Mode: clustercache.TrackingAnnotationMode, LabelKey: "example.com/app"},
			wantErr: `application.resourceTrackingMethod: "labels" is not a tracking method`,
		},
		"a key that is no label key is one error and the default applies": {
			data:    map[string]string{"application.resourceTrackingMethod": "label", "application.instanceLabelKey": "not a/label/key"},
			want:    clustercache.Tracking{Mode: clustercache.TrackingLabelMode, LabelKey: clustercache.InstanceLabel},
			wantErr: `application.instanceLabelKey: "not a/label/key" is not a label key`,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			s, errs := Parse(tc.data)
			if s.Application.Tracking != tc.want {
				t.Errorf("tracking %+v, want %+v", s.Application.Tracking, tc.want)
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
