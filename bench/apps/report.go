package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/skiffcd/skiff/api/v1alpha1"
)

// printOperationTimes prints, in seconds after since, when the apps' last
// sync operations were requested (the comparison that found the commit)
// and finished: a round's time splits into noticing and syncing.
func printOperationTimes(ctx context.Context, c client.Client, since time.Time) error {
	var apps v1alpha1.ApplicationList
	if err := c.List(ctx, &apps, client.InNamespace(argocdNS)); err != nil {
		return fmt.Errorf("listing applications: %w", err)
	}
	var requested, finished []float64
	for _, a := range apps.Items {
		if op := a.Status.OperationState; op != nil {
			requested = append(requested, op.StartedAt.Sub(since).Seconds())
			if op.FinishedAt != nil {
				finished = append(finished, op.FinishedAt.Sub(since).Seconds())
			}
		}
	}
	spread := func(v []float64) string {
		if len(v) == 0 {
			return "none"
		}
		sort.Float64s(v)
		q := func(f float64) float64 { return v[int(f*float64(len(v)-1))] }
		return fmt.Sprintf("min %+.0f, median %+.0f, p90 %+.0f, max %+.0f s", q(0), q(0.5), q(0.9), q(1))
	}
	fmt.Printf("  sync operations requested: %s; finished: %s\n", spread(requested), spread(finished))
	return nil
}

// printAppSize prints the size of one Application's JSON, whole and by
// part, as the API server stores it; with -profile, the object too.
func printAppSize(ctx context.Context, c client.Client, name string) error {
	app := &unstructured.Unstructured{}
	app.SetGroupVersionKind(v1alpha1.GroupVersion.WithKind("Application"))
	if err := c.Get(ctx, client.ObjectKey{Namespace: argocdNS, Name: name}, app); err != nil {
		return fmt.Errorf("reading %s: %w", name, err)
	}
	whole, err := json.Marshal(app.Object)
	if err != nil {
		return err
	}
	size := func(fields ...string) int {
		v, ok, _ := unstructured.NestedFieldNoCopy(app.Object, fields...)
		if !ok {
			return 0
		}
		b, _ := json.Marshal(v)
		return len(b)
	}
	fmt.Printf("Application %s: %d bytes of JSON: metadata.managedFields %d, spec %d, status %d (resources %d, history %d, operationState %d)\n",
		name, len(whole), size("metadata", "managedFields"), size("spec"), size("status"),
		size("status", "resources"), size("status", "history"), size("status", "operationState"))
	if *profileDir != "" {
		return os.WriteFile(filepath.Join(*profileDir, name+".json"), whole, 0o644)
	}
	return nil
}

func printTable(rs []result) {
	w := os.Stdout
	servers := "one skiff server"
	if *replicas > 1 {
		servers = fmt.Sprintf("%d skiff servers sharing the apps (CPU summed, RSS the largest replica's)", *replicas)
	}
	planes := ""
	if *clusterCount > 1 {
		planes = fmt.Sprintf(", %d control planes (app i on plane i mod %d; skiff on the first)", *clusterCount, *clusterCount)
	}
	fmt.Fprintf(w, "\nbench/apps: N apps x (Deployment, headless Service, 3 ConfigMaps), one git repo, automated sync+prune+selfHeal, --app-resync 30s, %s%s\n", servers, planes)
	fmt.Fprintf(w, "%-5s %-9s %-24s %-26s %-22s %-20s %-20s %-15s %-s\n",
		"N", "floor", "initial sync (xfloor)", "CPU-s init (per app)", "peak RSS MiB", "commit→synced trig", "by polling", "steady CPU-s/60s", "API req/min")
	for _, r := range rs {
		ratio := float64(r.initial) / float64(r.floor)
		perApp := r.initialCPU / float64(r.n)
		peak := max(r.startRSS, r.initialRSS, r.steadyRSS, r.hwm)
		api := fmt.Sprintf("total %.0f (w/o skiff %.0f, Δ %.0f)", r.apiTotal, r.apiBaseline, r.apiTotal-r.apiBaseline)
		if !r.skiffMetricsMissed {
			api += fmt.Sprintf("; skiff client %.0f", r.skiffRequests)
		}
		fmt.Fprintf(w, "%-5d %-9s %-24s %-26s %-22s %-20s %-20s %-15s %s\n",
			r.n, secs(r.floor),
			fmt.Sprintf("%s (%.2fx)", secs(r.initial), ratio),
			fmt.Sprintf("%.1f (%.3f)", r.initialCPU, perApp),
			fmt.Sprintf("%.0f (init %.0f)", peak, r.initialRSS),
			secs(r.triggered), secs(r.polling),
			fmt.Sprintf("%.2f", r.steadyCPU), api)
	}
	fmt.Fprintln(w, "targets / verdicts:")
	for _, r := range rs {
		ratio := float64(r.initial) / float64(r.floor)
		perApp := r.initialCPU / float64(r.n)
		peak := max(r.startRSS, r.initialRSS, r.steadyRSS, r.hwm)
		perPeriod := r.skiffRequests * appResync.Minutes() / float64(r.n)
		src := "skiff client"
		if r.skiffMetricsMissed {
			perPeriod = (r.apiTotal - r.apiBaseline) * appResync.Minutes() / float64(r.n)
			src = "apiserver total minus baseline"
		}
		fmt.Fprintf(w, "  N=%d:\n", r.n)
		fmt.Fprintf(w, "    initial ≤ 1.1x floor:                 %.2fx  %s\n", ratio, verdict(ratio <= 1.1))
		fmt.Fprintf(w, "    CPU ≤ 0.05 CPU-s per app synced:      %.3f  %s\n", perApp, verdict(perApp <= 0.05))
		switch r.n {
		case 200:
			fmt.Fprintf(w, "    RSS ≤ 100 MiB at N=200:               %.0f MiB  %s\n", peak, verdict(peak <= 100))
		case 1000:
			fmt.Fprintf(w, "    RSS ≤ 250 MiB at N=1000:              %.1f MiB  %s\n", peak, verdict(peak <= 250))
		default:
			fmt.Fprintf(w, "    RSS (targets ≤ 100 MiB at N=200, ≤ 250 at N=1000): %.0f MiB\n", peak)
		}
		fmt.Fprintf(w, "      of which: peak anonymous %.0f MiB (heap, stacks), file-backed %.0f MiB then (the binary's code)\n", r.anonPeak, r.fileRSS)
		if r.n == 200 {
			fmt.Fprintf(w, "    triggered ≤ 5 s at N=200:             %s  %s\n", secs(r.triggered), verdict(r.triggered <= 5*time.Second))
		} else {
			fmt.Fprintf(w, "    triggered (target ≤ 5 s at N=200):    %s\n", secs(r.triggered))
		}
		fmt.Fprintf(w, "    polling ≤ one poll period (%s):      %s  %s\n", appResync, secs(r.polling), verdict(r.polling <= appResync))
		fmt.Fprintf(w, "    steady ≤ 1 API req per app per period: %.2f (%s)  %s\n", perPeriod, src, verdict(perPeriod <= 1))
		fmt.Fprintf(w, "    startup: %.2f CPU-s, %.0f MiB; triggered phase %.1f CPU-s; polling phase %.1f CPU-s\n",
			r.startCPU, r.startRSS, r.triggeredCPU, r.pollingCPU)
		if len(r.apiserverInitial) > 1 {
			fmt.Fprintf(w, "    control planes: apps %v; kube-apiserver CPU in the initial sync %s CPU-s\n",
				appsPerCluster(r.n, len(r.apiserverInitial)), joinFloats(r.apiserverInitial, " / "))
		}
		if len(r.replicas) > 1 {
			printReplicas(w, r)
		}
		fmt.Fprintf(w, "    server log: %d error lines\n", r.logErrors)
		for _, l := range r.logErrorLines {
			fmt.Fprintf(w, "      %s\n", l)
		}
	}
}

// printReplicas prints the replicas' own figures of one N, their sums and
// the largest share against issue #36's target for three replicas.
func printReplicas(w io.Writer, r result) {
	var startCPU, initialCPU, initialRSS, hwm float64
	for _, f := range r.replicas {
		fmt.Fprintf(w, "    %-9s (pid %d): start %.2f CPU-s %.0f MiB; initial sync %.1f CPU-s, peak RSS %.0f MiB; steady %.2f CPU-s/min; VmHWM %.0f MiB\n",
			f.name, f.pid, f.startCPU, f.startRSS, f.initialCPU, f.initialRSS, f.steadyCPU, f.hwm)
		startCPU += f.startCPU
		initialCPU += f.initialCPU
		initialRSS += f.initialRSS
		hwm += f.hwm
	}
	fmt.Fprintf(w, "    %d replicas, summed: start %.2f CPU-s; initial sync %.1f CPU-s (%.3f per app), peak RSS %.0f MiB; VmHWM %.0f MiB\n",
		len(r.replicas), startCPU, initialCPU, initialCPU/float64(r.n), initialRSS, hwm)
	largest := max(r.sharesInitial.largest(), r.sharesEnd.largest())
	if len(r.replicas) == 3 {
		fmt.Fprintf(w, "    each replica ≤ 40 %% of the apps:      %.1f %%  %s\n", 100*largest, verdict(largest <= 0.4))
	} else {
		fmt.Fprintf(w, "    largest replica's share of the apps:  %.1f %% (even: %.1f %%)\n", 100*largest, 100/float64(len(r.replicas)))
	}
	fmt.Fprintf(w, "    owners after the initial sync: %s\n", r.sharesInitial)
	fmt.Fprintf(w, "    owners at the end:             %s\n", r.sharesEnd)
	fmt.Fprintf(w, "    initial sync: %s; %d apps synced more than once\n", r.handovers, len(r.resynced))
}

// replicaLines formats one line per replica with its figures of phase:
// "start", "initial" (sync) or "steady" (state, and its VmHWM).
func replicaLines(figs []replicaFigures, phase string) string {
	var b strings.Builder
	for _, f := range figs {
		var line string
		switch phase {
		case "start":
			line = fmt.Sprintf("%.2f CPU-s, peak RSS %.1f MiB", f.startCPU, f.startRSS)
		case "initial":
			line = fmt.Sprintf("%.2f CPU-s, peak RSS %.1f MiB", f.initialCPU, f.initialRSS)
		case "steady":
			line = fmt.Sprintf("%.2f CPU-s/min, VmHWM %.1f MiB", f.steadyCPU, f.hwm)
		}
		fmt.Fprintf(&b, "    %s (pid %d): %s\n", f.name, f.pid, line)
	}
	return b.String()
}

func secs(d time.Duration) string { return fmt.Sprintf("%.1fs", d.Seconds()) }

func verdict(ok bool) string {
	if ok {
		return "OK"
	}
	return "MISSED"
}
