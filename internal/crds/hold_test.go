package crds

import (
	"testing"
	"time"
)

func TestCreateHoldLeftWaitsUntilTwoSecondsAfterEstablished(t *testing.T) {
	now := time.Date(2026, 12, 6, 18, 0, 10, 700_000_000, time.UTC)
	tests := map[string]struct {
		established time.Time
		want        time.Duration
	}{
		"a kind established this second is held until two seconds after the second began": {
			established: now.Truncate(time.Second), want: 1300 * time.Millisecond},
		"a kind established the second before is held for what is left": {
			established: now.Truncate(time.Second).Add(-time.Second), want: 300 * time.Millisecond},
		"a kind established two seconds ago is not held": {
			established: now.Add(-2 * time.Second), want: 0},
		"a kind established long ago (a restart) is not held": {
			established: now.Add(-time.Hour), want: 0},
		"an API server clock ahead of ours makes the wait no longer than one hold": {
			established: now.Add(time.Minute), want: 2 * time.Second},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := createHoldLeft(tc.established, now); got != tc.want {
				t.Errorf("createHoldLeft = %s, want %s", got, tc.want)
			}
		})
	}
}
