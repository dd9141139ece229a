package main

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// timeline records when each object (by key) first reached each milestone,
// as a duration after a common start, so that a phase's time splits into
// the steps an app goes through.
type timeline struct {
	start      time.Time
	milestones []string

	mu    sync.Mutex
	first map[string][]time.Duration // key → by milestone; 0 = not reached
}

func newTimeline(start time.Time, milestones ...string) *timeline {
	return &timeline{start: start, milestones: milestones, first: map[string][]time.Duration{}}
}

// mark records that key has reached milestone (an index into the
// milestones), unless it had already.
func (t *timeline) mark(key string, milestone int) {
	at := time.Since(t.start)
	t.mu.Lock()
	defer t.mu.Unlock()
	times, ok := t.first[key]
	if !ok {
		times = make([]time.Duration, len(t.milestones))
		t.first[key] = times
	}
	if times[milestone] == 0 {
		times[milestone] = at
	}
}

// String gives, per milestone, how many keys reached it and when:
// min / median / p90 / max seconds after the start.
func (t *timeline) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	var b strings.Builder
	for m, name := range t.milestones {
		var at []float64
		for _, times := range t.first {
			if times[m] != 0 {
				at = append(at, times[m].Seconds())
			}
		}
		if len(at) == 0 {
			fmt.Fprintf(&b, "  %-22s none\n", name)
			continue
		}
		sort.Float64s(at)
		q := func(f float64) float64 { return at[int(f*float64(len(at)-1))] }
		fmt.Fprintf(&b, "  %-22s %5d: min %6.2f, median %6.2f, p90 %6.2f, max %6.2f s\n", name, len(at), q(0), q(0.5), q(0.9), q(1))
	}
	return b.String()
}

// appKey names app i's entries in a timeline, from its Application's name
// or its namespace.
func appKey(name string) string {
	return name[strings.LastIndexByte(name, '-')+1:]
}

// watchDeployments marks in steps when each app's Deployment is first seen
// and first Available, until all n are Available or stop is called.
func watchDeployments(ctx context.Context, c client.WithWatch, n int, steps *timeline, created, availableStep int) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		newList := func() client.ObjectList { return &appsv1.DeploymentList{} }
		_ = waitWatch(ctx, c, "Deployments", waitTimeout, nil, newList, nil, func(objs map[types.NamespacedName]client.Object, _ *types.NamespacedName) (bool, string) {
			ready := 0
			for _, obj := range objs {
				d := obj.(*appsv1.Deployment)
				key := appKey(d.Namespace)
				steps.mark(key, created)
				if available(d) {
					steps.mark(key, availableStep)
					ready++
				}
			}
			return ready >= n, ""
		})
	}()
	return func() { cancel(); <-done }
}
