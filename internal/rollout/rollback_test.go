package rollout

import (
	"testing"
	"time"
)

func TestWithinRollbackWindow(t *testing.T) {
	at := func(minute int) time.Time { return time.Date(2026, 12, 4, 6, minute, 0, 0, time.UTC) }
	tests := map[string]struct {
		target, stable time.Time
		others         []time.Time
		revisions      int32
		want           bool
	}{
		"no window never fast-tracks":               {target: at(1), stable: at(2), revisions: 0},
		"the revision before stable is in a window": {target: at(1), stable: at(2), revisions: 1, want: true},
		"one revision between needs a window of 2":  {target: at(1), stable: at(3), others: []time.Time{at(2)}, revisions: 1},
		"a window of 2 covers one between":          {target: at(1), stable: at(3), others: []time.Time{at(2)}, revisions: 2, want: true},
		"a newer template is an update, not a rollback": {
			target: at(3), stable: at(2), revisions: 5,
		},
		"revisions outside the range do not count": {
			target: at(2), stable: at(3), others: []time.Time{at(1), at(4)}, revisions: 1, want: true,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := WithinRollbackWindow(tc.target, tc.stable, tc.others, tc.revisions); got != tc.want {
				t.Errorf("WithinRollbackWindow = %v, want %v", got, tc.want)
			}
		})
	}
}
