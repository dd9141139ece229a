// Command rollouts benchmarks skiff's Rollout controller against Argo
// Rollouts' own (v1.10.2) side by side, on one control plane
// (internal/testcluster), one controller after the other (issue #39):
//
//	go run ./bench/rollouts [-n 200] [-strategy canary|bluegreen|both] [-idle 30s]
//	    [-skiff BIN] [-profile DIR] [-only floor|argo|skiff] [-timeout 10m]
//
// Each run has a fresh namespace and only its own controller running:
//
//   - floor: N plain Deployments (2 replicas) rolled out by
//     kube-controller-manager, then an image update rolled out;
//   - argo: N Rollouts under Argo Rollouts' real controller, namespaced;
//   - skiff: the same N Rollouts under `skiff server` as shipped.
//
// Per run: the time from the first write until all N are Healthy after
// create and after an image update, the controller's CPU-s in create,
// update and an idle spell, its peak RSS (/proc), kube-apiserver's CPU-s,
// and the ratios skiff/Argo Rollouts in a Markdown table.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"slices"
	"time"

	"github.com/go-logr/logr"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/skiffcd/skiff/bench/internal/benchkit"
)

var (
	n              = flag.Int("n", 200, "Rollouts (and the floor's Deployments) per run")
	strategy       = flag.String("strategy", "canary", "canary, bluegreen or both (one table each)")
	idle           = flag.Duration("idle", 30*time.Second, "how long each controller idles after the update")
	skiffBin       = flag.String("skiff", "", "a prebuilt skiff binary (default: build ./cmd/skiff)")
	profileDir     = flag.String("profile", "", "serve skiff's pprof, write its CPU profiles of create and update and a heap profile into this directory, and keep the controllers' logs there")
	profileSeconds = flag.Int("profile-seconds", 30, "length of each CPU profile (from the start of create and of update)")
	only           = flag.String("only", "", "run only floor, argo or skiff")
	waitTimeout    = flag.Duration("timeout", 10*time.Minute, "bound of every wait for all Healthy")
	logDirFlag     = flag.String("log-dir", "", "keep the controllers' logs in this directory (default: -profile's, else a temporary directory removed at the end)")
)

var sides = []string{"floor", "argo", "skiff"}

func main() {
	flag.Parse()
	if err := checkFlags(); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(2)
	}
	// The bench's own clients have nothing to log.
	ctrl.SetLogger(logr.Discard())
	if err := run(context.Background()); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

func checkFlags() error {
	if *n <= 0 {
		return fmt.Errorf("bad -n %d", *n)
	}
	if *strategy != "both" && strategies[*strategy] == "" {
		return fmt.Errorf("bad -strategy %q: canary, bluegreen or both", *strategy)
	}
	if *only != "" && !slices.Contains(sides, *only) {
		return fmt.Errorf("bad -only %q: floor, argo or skiff", *only)
	}
	return nil
}

func run(ctx context.Context) error {
	tmp, err := os.MkdirTemp("", "skiff-bench-rollouts-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	logDir := tmp
	for _, dir := range []string{*profileDir, *logDirFlag} {
		if dir == "" {
			continue
		}
		logDir = dir
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
	}
	bin := *skiffBin
	if bin == "" && *only != "floor" && *only != "argo" {
		if bin, err = benchkit.BuildSkiff(tmp); err != nil {
			return err
		}
	}
	e, err := startEnv(ctx, bin, logDir, tmp)
	if err != nil {
		return err
	}
	defer e.cluster.Stop()

	strats := []string{*strategy}
	if *strategy == "both" {
		strats = []string{"canary", "bluegreen"}
	}
	floorDone := false
	var floor row
	for _, s := range strats {
		var rows []row
		for _, side := range sides {
			if *only != "" && side != *only {
				continue
			}
			// The floor does not depend on the strategy: one run serves both tables.
			if side == "floor" && floorDone {
				rows = append(rows, floor)
				continue
			}
			fmt.Printf("\n=== %s, %s, N=%d ===\n", side, s, *n)
			r, err := e.runOne(ctx, side, s)
			if err != nil {
				fmt.Print("\n" + table(rows, *n, s, *idle)) // what was measured survives a later failure
				return fmt.Errorf("%s %s: %w", side, s, err)
			}
			if side == "floor" {
				floor, floorDone = r, true
			}
			rows = append(rows, r)
		}
		fmt.Printf("\n%s\n%s", table(rows, *n, s, *idle), requestTable(rows, 15))
	}
	return nil
}
