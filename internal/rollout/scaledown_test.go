package rollout

import (
	"testing"
	"time"
)

func TestScaleDownAfter(t *testing.T) {
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	stamp := func(d time.Duration) string { return now.Add(d).Format(time.RFC3339) }
	tests := map[string]struct {
		replicas int32
		deadline string
		delay    time.Duration
		want     DelayedScaleDown
	}{
		"a ReplicaSet first asked to go down gets its deadline and stays up": {
			replicas: 3, delay: 30 * time.Second,
			want: DelayedScaleDown{Deadline: now.Add(30 * time.Second), Wait: 30 * time.Second},
		},
		"a ReplicaSet before its deadline stays up until then": {
			replicas: 3, deadline: stamp(10 * time.Second), delay: 30 * time.Second,
			want: DelayedScaleDown{Wait: 10 * time.Second},
		},
		"a ReplicaSet past its deadline goes to 0 and loses the annotation": {
			replicas: 3, deadline: stamp(-time.Second), delay: 30 * time.Second,
			want: DelayedScaleDown{ScaleDown: true, ClearDeadline: true},
		},
		"a ReplicaSet at its deadline goes": {
			replicas: 3, deadline: stamp(0),
			want: DelayedScaleDown{ScaleDown: true, ClearDeadline: true},
		},
		"without a delay the deadline is written and the ReplicaSet goes in the same pass": {
			replicas: 3,
			want:     DelayedScaleDown{Deadline: now, ScaleDown: true, ClearDeadline: true},
		},
		"a deadline that does not parse is replaced": {
			replicas: 3, deadline: "tomorrow", delay: time.Minute,
			want: DelayedScaleDown{Deadline: now.Add(time.Minute), Wait: time.Minute},
		},
		"a ReplicaSet already at 0 only loses the annotation": {
			replicas: 0, deadline: stamp(time.Hour), delay: time.Minute,
			want: DelayedScaleDown{ClearDeadline: true},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := ScaleDownAfter(tc.replicas, tc.deadline, tc.delay, now); got != tc.want {
				t.Errorf("ScaleDownAfter = %+v, want %+v", got, tc.want)
			}
		})
	}
}
