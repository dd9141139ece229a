package gctune

import (
	"context"
	"runtime"
	"runtime/debug"
	"testing"
	"time"
)

const mib = 1 << 20

func TestPercent(t *testing.T) {
	tests := map[string]struct {
		live uint64
		want int
	}{
		"a large heap keeps the base percentage":                {live: 400 * mib, want: 40},
		"a heap whose base headroom is the floor keeps it":      {live: 40 * mib, want: 40},
		"a small heap is given the floor's headroom":            {live: 20 * mib, want: 80},
		"a tiny heap is capped at the maximum":                  {live: 2 * mib, want: 100},
		"before the first collection the base percentage holds": {live: 0, want: 40},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := Percent(tc.live, 16*mib, 40, 100); got != tc.want {
				t.Errorf("Percent(%d MiB) = %d, want %d", tc.live/mib, got, tc.want)
			}
		})
	}
	if got := Percent(2*mib, 16*mib, 120, 100); got != 120 {
		t.Errorf("a base above the maximum was changed to %d", got)
	}
}

// Run reads the runtime's live heap and sets the percentage: this test's
// heap is a few MiB, so a 64 MiB floor raises it to the maximum.
func TestRunRaisesTheRuntimesPercentageForASmallHeap(t *testing.T) {
	set := make(chan int, 16)
	setGCPercent = func(p int) {
		select {
		case set <- p:
		default:
		}
	}
	defer func() { setGCPercent = func(p int) { debug.SetGCPercent(p) } }()
	runtime.GC() // the live heap is measured
	ctx, cancel := context.WithCancel(context.Background())
	ran := make(chan struct{})
	go func() {
		defer close(ran)
		Run(ctx, 64*mib, 40, 150, 10*time.Millisecond)
	}()
	defer func() { cancel(); <-ran }() // before setGCPercent is restored
	select {
	case got := <-set:
		if got != 150 {
			t.Errorf("GC percent set to %d, want 150", got)
		}
	case <-time.After(5 * time.Second):
		t.Error("Run set no GC percent within 5 s")
	}
}
