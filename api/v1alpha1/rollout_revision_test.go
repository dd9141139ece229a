package v1alpha1

import (
	"math"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestRolloutRevision(t *testing.T) {
	tests := map[string]struct {
		annotations map[string]string
		want        int64
	}{
		"a numbered revision is its number":    {annotations: map[string]string{AnnotationRolloutRevision: "12"}, want: 12},
		"an object without annotations is 0":   {},
		"another annotation does not count":    {annotations: map[string]string{"revision": "3"}},
		"a revision that is not a number is 0": {annotations: map[string]string{AnnotationRolloutRevision: "two"}},
		"a revision past int64 is the largest": {annotations: map[string]string{AnnotationRolloutRevision: "99999999999999999999"}, want: math.MaxInt64},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			rs := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Annotations: tc.annotations}}
			if got := RolloutRevision(rs); got != tc.want {
				t.Errorf("got %d, want %d", got, tc.want)
			}
		})
	}
}
