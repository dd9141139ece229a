package main

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/skiffcd/skiff/api/v1alpha1"
	"github.com/skiffcd/skiff/bench/internal/benchkit"
)

// appShares is which replica owns which app, as their metrics tell it: a
// replica exports argocd_app_info only for the apps it owns.
type appShares struct {
	n int
	// owned counts the apps each replica reports, in replica order.
	owned []int
	// names are the replicas, in order; perCluster counts each replica's
	// apps on each control plane (with -clusters > 1, else nil).
	names      []string
	perCluster [][]int
	// twice lists the apps more than one replica reports, with them;
	// never the apps none reports.
	twice, never []string
}

// countShares scrapes argocd_app_info from every replica and checks that
// each of the n apps is reported by exactly one; with k > 1 control planes
// it also counts each replica's apps per plane.
func countShares(ctx context.Context, rs replicaSet, n, k int) (appShares, error) {
	s := appShares{n: n}
	owners, owned, err := scrapeOwners(ctx, rs)
	if err != nil {
		return s, err
	}
	s.owned = owned
	for _, r := range rs {
		s.names = append(s.names, r.name)
	}
	if k > 1 {
		s.perCluster = sharesPerCluster(owners, s.names, k)
	}
	for i := range n {
		if len(owners[appName(i)]) == 0 {
			s.never = append(s.never, appName(i))
		}
	}
	for name, by := range owners {
		if len(by) > 1 {
			s.twice = append(s.twice, fmt.Sprintf("%s (%s)", name, strings.Join(by, ", ")))
		}
	}
	slices.Sort(s.twice)
	return s, nil
}

// scrapeOwners returns the replicas that report each app in
// argocd_app_info, and how many apps each replica reports.
func scrapeOwners(ctx context.Context, rs replicaSet) (owners map[string][]string, owned []int, err error) {
	owners = map[string][]string{}
	for _, r := range rs {
		series, err := benchkit.ScrapeSeries(ctx, http.DefaultClient, "http://"+r.metricsAddr+"/metrics", "argocd_app_info")
		if err != nil && !errors.Is(err, benchkit.ErrNoSeries) {
			return nil, nil, fmt.Errorf("%s: %w", r.name, err)
		}
		// One series per app, but count names: an app's labels may change.
		names := map[string]bool{}
		for k := range series {
			names[benchkit.SeriesLabels(k)["name"]] = true
		}
		for name := range names {
			owners[name] = append(owners[name], r.name)
		}
		owned = append(owned, len(names))
	}
	return owners, owned, nil
}

// largest is the largest replica's share of the apps.
func (s appShares) largest() float64 {
	if s.n == 0 || len(s.owned) == 0 {
		return 0
	}
	return float64(slices.Max(s.owned)) / float64(s.n)
}

// String is the shares on one line, then any app counted twice or never.
func (s appShares) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "apps per replica %v, largest share %.1f %%", s.owned, 100*s.largest())
	if len(s.twice) == 0 && len(s.never) == 0 {
		b.WriteString(", every app counted once")
	}
	if len(s.perCluster) > 0 {
		var parts []string
		for r, counts := range s.perCluster {
			parts = append(parts, fmt.Sprintf("%s %v", s.names[r], counts))
		}
		fmt.Fprintf(&b, "; per control plane: %s", strings.Join(parts, ", "))
	}
	if len(s.twice) > 0 {
		fmt.Fprintf(&b, "\n  %d apps counted more than once: %s", len(s.twice), strings.Join(first(s.twice, 10), "; "))
	}
	if len(s.never) > 0 {
		fmt.Fprintf(&b, "\n  %d apps counted by no replica: %s", len(s.never), strings.Join(first(s.never, 10), ", "))
	}
	return b.String()
}

// first returns at most n of list.
func first(list []string, n int) []string {
	return list[:min(n, len(list))]
}

// appsSyncedTwice returns the apps whose history holds more than one sync:
// after the initial sync every app should have been synced once, by its
// one owner, whatever changed hands.
func appsSyncedTwice(ctx context.Context, c client.Client) ([]string, error) {
	var list v1alpha1.ApplicationList
	if err := c.List(ctx, &list, client.InNamespace(argocdNS)); err != nil {
		return nil, err
	}
	var twice []string
	for _, a := range list.Items {
		if len(a.Status.History) > 1 {
			twice = append(twice, fmt.Sprintf("%s (%d)", a.Name, len(a.Status.History)))
		}
	}
	slices.Sort(twice)
	return twice, nil
}

// ownerWatch follows the apps' owners while a phase runs: an app that
// changes hands between live replicas waits a handover delay (two lease
// retry periods and a second) before its new owner acts on it, and an
// operation it had running stops.
type ownerWatch struct {
	cancel context.CancelFunc
	done   chan struct{}
	start  time.Time
	// seen holds, per app, each change of the replicas reporting it
	// ("" when none does any more) after the first one; samples and
	// failed count the scrapes.
	seen            map[string][]sighting
	samples, failed int
}

// sighting is the replicas reporting an app from a moment of the phase.
type sighting struct {
	at time.Duration
	by string // "skiff-r1", "skiff-r1+skiff-r3", or "" for none
}

// watchOwners samples the owners every -owner-sampling until summary;
// with one replica, or -owner-sampling 0, it follows nothing.
func watchOwners(ctx context.Context, rs replicaSet) *ownerWatch {
	ctx, cancel := context.WithCancel(ctx)
	w := &ownerWatch{cancel: cancel, done: make(chan struct{}), start: time.Now(), seen: map[string][]sighting{}}
	if len(rs) == 1 || *ownerSampling <= 0 {
		close(w.done)
		return w
	}
	go func() {
		defer close(w.done)
		tick := time.NewTicker(*ownerSampling)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			owners, _, err := scrapeOwners(ctx, rs)
			if err != nil {
				w.failed++
				continue
			}
			w.samples++
			w.record(owners)
		}
	}()
	return w
}

// record notes the apps whose reporting replicas changed since the last
// sample.
func (w *ownerWatch) record(owners map[string][]string) {
	at := time.Since(w.start)
	for app, seen := range w.seen {
		if _, still := owners[app]; !still && seen[len(seen)-1].by != "" {
			w.seen[app] = append(seen, sighting{at, ""})
		}
	}
	for app, by := range owners {
		now := strings.Join(by, "+")
		if seen := w.seen[app]; len(seen) == 0 || seen[len(seen)-1].by != now {
			w.seen[app] = append(seen, sighting{at, now})
		}
	}
}

// summary stops the sampling and says which apps changed hands, and when.
func (w *ownerWatch) summary() string {
	w.cancel()
	<-w.done
	if *ownerSampling <= 0 {
		return "owners not sampled (-owner-sampling 0)"
	}
	var moved, twice []string
	for _, app := range slices.Sorted(maps.Keys(w.seen)) {
		seen := w.seen[app]
		if len(seen) == 1 {
			continue
		}
		var steps []string
		for _, s := range seen {
			by := s.by
			if by == "" {
				by = "none"
			}
			steps = append(steps, fmt.Sprintf("%s at %.0f s", by, s.at.Seconds()))
			if strings.Contains(s.by, "+") && !slices.Contains(twice, app) {
				twice = append(twice, app)
			}
		}
		moved = append(moved, app+": "+strings.Join(steps, ", "))
	}
	s := fmt.Sprintf("owners sampled every %s, %d times (%d failed): %d apps changed hands, %d of them reported by two replicas at once (a sample is not atomic: a move can show in one sample, not in several)",
		*ownerSampling, w.samples, w.failed, len(moved), len(twice))
	if len(moved) > 0 {
		s += ": " + strings.Join(first(moved, 10), "; ")
	}
	return s
}
