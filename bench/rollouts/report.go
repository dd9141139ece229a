package main

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
)

// rowLabels name the runs in the table: each run's figures are its
// controller's.
var rowLabels = map[string]string{
	"floor": "floor (Deployments; kube-controller-manager)",
	"argo":  "Argo Rollouts v1.10.2",
	"skiff": "skiff server",
}

// table formats the runs as a Markdown table: times against the floor,
// and a last line of skiff's figures against Argo Rollouts'.
func table(rows []row, n int, strategy string, idle time.Duration) string {
	var b strings.Builder
	fmt.Fprintf(&b, "| N=%d %s | create → all Healthy | vs floor | update → all Healthy | vs floor | CPU-s create | CPU-s update | idle CPU-s/%s | peak RSS MiB | apiserver CPU-s create | apiserver CPU-s update |\n",
		n, strategy, idle)
	b.WriteString("|---|---|---|---|---|---|---|---|---|---|---|\n")
	byName := map[string]row{}
	for _, r := range rows {
		byName[r.name] = r
	}
	floor, hasFloor := byName["floor"]
	vsFloor := func(d, f time.Duration) string {
		if !hasFloor || f <= 0 {
			return "-"
		}
		return fmt.Sprintf("%.2fx", d.Seconds()/f.Seconds())
	}
	for _, r := range rows {
		label := rowLabels[r.name]
		if label == "" {
			label = r.name
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %.1f | %.1f | %.2f | %.0f | %.1f | %.1f |\n", label,
			secs(r.create), vsFloor(r.create, floor.create), secs(r.update), vsFloor(r.update, floor.update),
			r.cpu[0], r.cpu[1], r.cpu[2], r.rss, r.apiCPU[0], r.apiCPU[1])
	}
	argo, hasArgo := byName["argo"]
	skiff, hasSkiff := byName["skiff"]
	if hasArgo && hasSkiff {
		fmt.Fprintf(&b, "| skiff / Argo Rollouts | %s | | %s | | %s | %s | %s | %s | %s | %s |\n",
			ratio(skiff.create.Seconds(), argo.create.Seconds()), ratio(skiff.update.Seconds(), argo.update.Seconds()),
			ratio(skiff.cpu[0], argo.cpu[0]), ratio(skiff.cpu[1], argo.cpu[1]), ratio(skiff.cpu[2], argo.cpu[2]),
			ratio(skiff.rss, argo.rss), ratio(skiff.apiCPU[0], argo.apiCPU[0]), ratio(skiff.apiCPU[1], argo.apiCPU[1]))
	}
	return b.String()
}

// ratio is a/b as "1.23x", "-" when b is not positive.
func ratio(a, b float64) string {
	if b <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.2fx", a/b)
}

// requestTable formats the runs' API requests (every client's) by verb and
// resource as a Markdown table, a create and an update column per run: the
// top resources by their largest count, then the totals.
func requestTable(rows []row, top int) string {
	totals := make([]float64, 2*len(rows))
	largest := map[string]float64{}
	for i, r := range rows {
		for phase, counts := range r.requests {
			for k, v := range counts {
				totals[2*i+phase] += v
				largest[k] = max(largest[k], v)
			}
		}
	}
	keys := slices.Collect(maps.Keys(largest))
	slices.SortFunc(keys, func(a, b string) int {
		if c := cmp.Compare(largest[b], largest[a]); c != 0 {
			return c
		}
		return strings.Compare(a, b)
	})
	keys = keys[:min(top, len(keys))]
	var b strings.Builder
	b.WriteString("| API requests (all clients) |")
	for _, r := range rows {
		fmt.Fprintf(&b, " %s create | %s update |", r.name, r.name)
	}
	b.WriteString("\n|---|" + strings.Repeat("---|", 2*len(rows)) + "\n")
	for _, k := range keys {
		b.WriteString("| " + k + " |")
		for _, r := range rows {
			fmt.Fprintf(&b, " %.0f | %.0f |", r.requests[0][k], r.requests[1][k])
		}
		b.WriteString("\n")
	}
	b.WriteString("| total |")
	for _, t := range totals {
		fmt.Fprintf(&b, " %.0f |", t)
	}
	b.WriteString("\n")
	return b.String()
}
