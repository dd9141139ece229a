package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
)

// appShares is which replica owns which app, as their metrics tell it: a
// replica exports argocd_app_info only for the apps it owns.
type appShares struct {
	n int
	// owned counts the apps each replica reports, in replica order.
	owned []int
	// twice lists the apps more than one replica reports, with them;
	// never the apps none reports.
	twice, never []string
}

// countShares scrapes argocd_app_info from every replica and checks that
// each of the n apps is reported by exactly one.
func countShares(ctx context.Context, rs replicaSet, n int) (appShares, error) {
	s := appShares{n: n}
	owners := map[string][]string{}
	for _, r := range rs {
		series, err := scrapeSeries(ctx, http.DefaultClient, "http://"+r.metricsAddr+"/metrics", "argocd_app_info")
		if err != nil && !errors.Is(err, errNoSeries) {
			return s, fmt.Errorf("%s: %w", r.name, err)
		}
		// One series per app, but count names: an app's labels may change.
		names := map[string]bool{}
		for k := range series {
			names[seriesLabels(k)["name"]] = true
		}
		for name := range names {
			owners[name] = append(owners[name], r.name)
		}
		s.owned = append(s.owned, len(names))
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
