// Command appsets benchmarks the ApplicationSet controller end to end
// (issue #38) against a real `skiff server` on its own control plane:
//
//	go run ./bench/appsets [-n 1000] [-skiff BIN] [-timeout 10m] [-log-dir DIR]
//
// Each app is one small ConfigMap in its directory of one local git
// repository (apps/app-NNNN), synced automatically into one namespace. On
// a fresh control plane and skiff server each:
//
//   - floor: N Applications created directly by a plain client, 20 in
//     flight: the time until all exist and until all are Synced;
//   - list: one ApplicationSet whose List generator has N elements;
//   - dirs: one ApplicationSet whose git directories generator reads the N
//     directories; then one commit adding a directory and a signed GitHub
//     push webhook, and the time until the new app exists.
//
// The sets' figures are printed as ratios against the floor of the same
// run, with skiff server's CPU and peak RSS in each phase.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/go-logr/logr"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/skiffcd/skiff/bench/internal/benchkit"
)

// Issue #38's targets.
const (
	existTarget   = 10 * time.Second
	webhookTarget = 5 * time.Second
)

var (
	n           = flag.Int("n", 1000, "applications per phase")
	skiffBin    = flag.String("skiff", "", "a prebuilt skiff binary (default: build ./cmd/skiff)")
	waitTimeout = flag.Duration("timeout", 10*time.Minute, "bound of every wait")
	logDirFlag  = flag.String("log-dir", "", "keep skiff servers' logs in this directory (default: a temporary directory removed at the end)")
)

func main() {
	flag.Parse()
	if *n <= 0 {
		fmt.Fprintf(os.Stderr, "bench: bad -n %d\n", *n)
		os.Exit(2)
	}
	// The bench's own clients have nothing to log; skiff server logs to its file.
	ctrl.SetLogger(logr.Discard())
	if err := run(context.Background()); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context) error {
	tmp, err := os.MkdirTemp("", "skiff-bench-appsets-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	logDir := tmp
	if *logDirFlag != "" {
		logDir = *logDirFlag
		if err := os.MkdirAll(logDir, 0o755); err != nil {
			return err
		}
	}
	bin := *skiffBin
	if bin == "" {
		if bin, err = benchkit.BuildSkiff(tmp); err != nil {
			return err
		}
	}
	repo, err := newRepo(filepath.Join(tmp, "repo"), *n)
	if err != nil {
		return err
	}
	var rows []phase
	defer func() { printTable(rows) }() // partial results survive a later failure
	for _, p := range []struct {
		name string
		run  func(*env) (phase, error)
	}{
		{"floor", func(e *env) (phase, error) { return floorPhase(ctx, e, repo) }},
		{"list", func(e *env) (phase, error) { return setPhase(ctx, e, listSet(repo.URL(), *n)) }},
		{"dirs", func(e *env) (phase, error) { return dirsPhase(ctx, e, repo) }},
	} {
		fmt.Printf("\n=== %s, N=%d ===\n", p.name, *n)
		e, err := startEnv(ctx, p.name, bin, logDir, tmp)
		if err != nil {
			return fmt.Errorf("%s: %w", p.name, err)
		}
		row, err := p.run(e)
		row.name = p.name
		if err == nil {
			rows = append(rows, row)
		}
		e.stop()
		if err != nil {
			return fmt.Errorf("%s: %w\nserver log %s, last lines:\n%s", p.name, err, e.log, benchkit.Tail(e.log, 20))
		}
	}
	return nil
}
