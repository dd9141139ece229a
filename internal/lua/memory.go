package lua

import (
	"runtime"
	"runtime/metrics"
	"sync"
	"time"
)

// memorySample is how often the watchdog reads the heap while calls run.
const memorySample = 2 * time.Millisecond

const (
	metricHeapObjects = "/memory/classes/heap/objects:bytes" // current, garbage included
	metricHeapLive    = "/gc/heap/live:bytes"                // live at the last GC
)

// watchedCall is one running call's baseline.
type watchedCall struct {
	limit uint64
	// objects is the heap (garbage included) at the call's start, moved up
	// after each forced GC so that garbage is not counted twice.
	objects uint64
	// live is the live heap at the call's start.
	live uint64
	stop func()
}

// watchdog samples the heap while any call runs.
var watchdog struct {
	mu         sync.Mutex
	calls      map[*watchedCall]struct{}
	running    bool
	confirming bool
}

// hardFactor: a heap grown by this many limits during a call stops it
// without waiting for a GC to tell garbage from live data.
const hardFactor = 4

// watchMemory watches the heap until the returned release is called, and
// calls stop (once or more) when the live heap grew by more than limit.
func watchMemory(limit uint64, stop func()) (release func()) {
	objects, live := heap()
	c := &watchedCall{limit: limit, objects: objects, live: live, stop: stop}
	watchdog.mu.Lock()
	defer watchdog.mu.Unlock()
	if watchdog.calls == nil {
		watchdog.calls = map[*watchedCall]struct{}{}
	}
	watchdog.calls[c] = struct{}{}
	if !watchdog.running {
		watchdog.running = true
		go watch()
	}
	return func() {
		watchdog.mu.Lock()
		defer watchdog.mu.Unlock()
		delete(watchdog.calls, c)
	}
}

// watch samples the heap until no call is left.
func watch() {
	tick := time.NewTicker(memorySample)
	defer tick.Stop()
	for range tick.C {
		watchdog.mu.Lock()
		if len(watchdog.calls) == 0 {
			watchdog.running = false
			watchdog.mu.Unlock()
			return
		}
		objects, _ := heap()
		suspect := false
		for c := range watchdog.calls {
			if objects > c.objects+hardFactor*c.limit {
				c.stop()
			}
			suspect = suspect || objects > c.objects+c.limit
		}
		if suspect && !watchdog.confirming {
			watchdog.confirming = true
			go confirm()
		}
		watchdog.mu.Unlock()
	}
}

// confirm collects garbage, so that only what calls keep alive counts, and
// stops the calls whose live growth is over their limit. It runs beside the
// sampling, which stops a call at once if the heap outgrows hardFactor
// limits meanwhile: a GC takes a while, and a script doubling a string
// doubles its memory with every instruction.
func confirm() {
	runtime.GC()
	objects, live := heap()
	watchdog.mu.Lock()
	defer watchdog.mu.Unlock()
	watchdog.confirming = false
	for c := range watchdog.calls {
		if live > c.live+c.limit {
			c.stop()
			continue
		}
		c.objects = max(c.objects, objects)
	}
}

// heap reads the heap's current size and its live size at the last GC.
func heap() (objects, live uint64) {
	s := []metrics.Sample{{Name: metricHeapObjects}, {Name: metricHeapLive}}
	metrics.Read(s)
	return value(s[0]), value(s[1])
}

func value(s metrics.Sample) uint64 {
	if s.Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s.Value.Uint64()
}
