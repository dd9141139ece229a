// Package gctune keeps the garbage collector's headroom above a floor. A
// percentage alone (GOGC) makes a small heap collect every few MiB
// allocated, which costs CPU for memory nobody would miss; a large heap
// keeps the lean percentage.
package gctune

import (
	"context"
	"runtime/debug"
	"runtime/metrics"
	"time"
)

// Percent is the GC percent for a live heap of live bytes: base, raised
// so that the heap may grow by at least minHeadroom bytes before the next
// collection, and never above ceiling.
func Percent(live, minHeadroom uint64, base, ceiling int) int {
	if live == 0 || base >= ceiling {
		return base
	}
	return min(ceiling, max(base, int(minHeadroom*100/live)))
}

// setGCPercent is debug.SetGCPercent; a test watches it.
var setGCPercent = func(p int) { debug.SetGCPercent(p) }

// liveHeap is the runtime's count of the heap marked live by the last
// collection.
const liveHeap = "/gc/heap/live:bytes"

// Run sets the GC percent from the live heap every interval until ctx
// ends (see Percent).
func Run(ctx context.Context, minHeadroom uint64, base, ceiling int, every time.Duration) {
	sample := []metrics.Sample{{Name: liveHeap}}
	t := time.NewTicker(every)
	defer t.Stop()
	current := base
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		metrics.Read(sample)
		if sample[0].Value.Kind() != metrics.KindUint64 {
			return // a runtime without the metric: GOGC stays base
		}
		if p := Percent(sample[0].Value.Uint64(), minHeadroom, base, ceiling); p != current {
			setGCPercent(p)
			current = p
		}
	}
}
