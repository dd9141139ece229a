package main

import (
	"fmt"
	"os"
	"text/tabwriter"
	"time"
)

// printTable prints each phase against the floor of the same run, and
// issue #38's targets.
func printTable(rows []phase) {
	if len(rows) == 0 {
		return
	}
	floor := rows[0]
	ratio := func(d, f time.Duration) string {
		if f <= 0 {
			return "-"
		}
		return fmt.Sprintf("%.2fx", d.Seconds()/f.Seconds())
	}
	fmt.Printf("\nN=%d (ratios against the floor of this run: N Applications created directly)\n", *n)
	w := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "phase\tall exist\tvs floor\tall Synced\tvs floor\tskiff CPU-s\tpeak RSS MiB\tnew dir by webhook")
	for _, r := range rows {
		hook := "-"
		if r.webhook > 0 {
			hook = fmt.Sprintf("%s (%.2f CPU-s)", secs(r.webhook), r.webhookCPU)
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%.2f\t%.1f\t%s\n", r.name, secs(r.exist), ratio(r.exist, floor.exist), secs(r.synced), ratio(r.synced, floor.synced), r.cpu, r.rss, hook)
	}
	_ = w.Flush()
	for _, r := range rows[1:] {
		fmt.Printf("%s: all apps exist within %s: %s\n", r.name, existTarget, verdict(r.exist <= existTarget))
		if r.webhook > 0 {
			fmt.Printf("%s: a pushed directory's app exists within %s: %s\n", r.name, webhookTarget, verdict(r.webhook <= webhookTarget))
		}
	}
}

func verdict(ok bool) string {
	if ok {
		return "yes"
	}
	return "NO"
}
