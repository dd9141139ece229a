package application

import (
	"context"
	"testing"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"

	"github.com/skiffcd/skiff/internal/clustercache"
)

// The live changes of one app within the coalescing delay are one
// comparison, queued the delay after the first; another app's are its own.
func TestLiveChangesAreCoalesced(t *testing.T) {
	q := priorityqueue.New[ctrl.Request]("coalesce-test")
	defer q.ShutDown()
	delay := 200 * time.Millisecond
	h := enqueueAfter(delay)
	first := time.Now()
	for _, app := range []string{"web", "web", "web", "api", "web"} {
		h.Generic(context.Background(), appEvent("argocd", app), q)
	}
	if n := q.Len(); n != 0 {
		t.Fatalf("%d comparisons ready at once; want none before the delay", n)
	}

	got := map[string]int{}
	for range 2 {
		req, ok := getWithin(q, 5*time.Second)
		if !ok {
			t.Fatalf("only %v queued within 5 s; want web and api once each", got)
		}
		if waited := time.Since(first); waited < delay {
			t.Errorf("%s queued after %v; want no sooner than %v", req.Name, waited, delay)
		}
		got[req.Name]++
		q.Done(req)
	}
	if got["web"] != 1 || got["api"] != 1 {
		t.Errorf("queued %v; want web and api once each", got)
	}
	if req, ok := getWithin(q, 2*delay); ok {
		t.Errorf("%s queued again; want the four changes of web to be one comparison", req.Name)
	}
}

// getWithin takes the next ready request from q, waiting at most d.
func getWithin(q priorityqueue.PriorityQueue[ctrl.Request], d time.Duration) (ctrl.Request, bool) {
	got := make(chan ctrl.Request, 1)
	go func() {
		if req, shutdown := q.Get(); !shutdown {
			got <- req
		}
	}()
	select {
	case req := <-got:
		return req, true
	case <-time.After(d):
		return ctrl.Request{}, false
	}
}

// A live change that moved an object's health is compared at once (the
// app's health may have moved); other changes wait to be coalesced; a
// change of an object no app tracks asks for nothing.
func TestHealthChangesSkipTheCoalescing(t *testing.T) {
	tests := map[string]struct {
		event             clustercache.Event
		atOnce, coalesced int
	}{
		"a health change is compared at once": {
			event: clustercache.Event{App: "web", HealthChanged: true}, atOnce: 1},
		"another change waits with the app's others": {
			event: clustercache.Event{App: "web"}, coalesced: 1},
		"a change of an untracked object asks for nothing": {
			event: clustercache.Event{HealthChanged: true}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			r := &Reconciler{Namespace: "argocd", compareNow: make(comparisonRequests, 4), compareCoalesced: make(comparisonRequests, 4)}
			r.liveChange(tc.event)
			if len(r.compareNow) != tc.atOnce || len(r.compareCoalesced) != tc.coalesced {
				t.Errorf("queued %d at once and %d coalesced; want %d and %d",
					len(r.compareNow), len(r.compareCoalesced), tc.atOnce, tc.coalesced)
			}
		})
	}
}
