// Command apps benchmarks the Application controller end to end (issue #5):
// N apps, each a Deployment, a headless Service and three ~1 KiB ConfigMaps
// in its own directory of one local git repository, synced by a real
// `skiff server` process into its own namespace (automated sync, prune,
// self-heal, CreateNamespace=true).
//
//	go run ./bench/apps [-n 50,200] [-idle 60s] [-timeout 10m]
//
// For every N, on fresh control planes: the floor (a plain client
// server-side applies the same objects, 20 in flight, until every
// Deployment is Available); skiff server's start (CPU and peak RSS from
// /proc); the initial sync of N Applications until all are Synced+Healthy;
// one commit touching every app, found through a triggered refresh (a
// signed GitHub push webhook to skiff's API, or with -trigger annotation a
// refresh annotation on every Application), then another found by the
// periodic poll; and 60 s of steady state (controller CPU and API
// requests).
package main

import (
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/go-logr/logr"
	"github.com/skiffcd/skiff/bench/internal/benchkit"
	ctrl "sigs.k8s.io/controller-runtime"
)

const (
	argocdNS  = "argocd"
	inFlight  = 20
	pollEvery = 500 * time.Millisecond
	// roundPause separates triggered rounds (and the polling phase) from
	// the work that follows a round's last sync.
	roundPause = 5 * time.Second
	appResync  = 30 * time.Second
	fieldOwner = "bench-floor"
)

var (
	skiffBin       = flag.String("skiff", "", "a prebuilt skiff binary (default: build ./cmd/skiff)")
	profileDir     = flag.String("profile", "", "write skiff server's CPU profiles of the initial sync, the triggered refresh and the steady state, kube-apiserver's of the triggered refresh (when the cluster serves profiles), and heap profiles after the first two, into this directory, and keep skiff server's log there")
	serverFlags    = flag.String("server-flags", "", "extra flags for skiff server, space-separated (e.g. \"--operation-processors=20\")")
	shape          = flag.String("shape", "web", `what each app holds: "web" (a Deployment, a headless Service and 3 ConfigMaps) or "configmap" (one small ConfigMap, for large N; the floor applies the same and waits for no Deployment)`)
	logDirFlag     = flag.String("log-dir", "", "keep skiff servers' logs in this directory (default: with -profile's profiles, else a temporary directory removed at the end)")
	profileSeconds = flag.Int("profile-seconds", 15, "length of each CPU profile")
	triggerRounds  = flag.Int("triggered-rounds", 3, "how many times the triggered refresh (a commit, then the trigger) is measured; the figures reported are the median round's (this phase takes seconds, and one round on the shared two cores varies by about a second)")
	trigger        = flag.String("trigger", "webhook", `how the triggered refresh is asked: "webhook" (one signed GitHub push event to skiff's API, which then runs too) or "annotation" (the refresh annotation on every Application; no API server)`)
	replicas       = flag.Int("replicas", 1, "how many skiff servers run against the control plane: more than one run with --leader-elect and share the apps (internal/shard), each with ports, a cache directory and a log of its own; the webhook and -profile go to the first")
	clusterCount   = flag.Int("clusters", 1, "how many control planes the apps deploy to: the first hosts skiff and the Applications, the others are registered by cluster Secrets; app i goes to plane i mod K (the first as the in-cluster destination), and the floor applies the same objects to as many planes of its own")
	pinShards      = flag.Bool("pin-shards", false, "with -clusters > 1, give each control plane's cluster Secret Argo CD's `shard` key (plane j: shard j), the first plane by a cluster Secret of the in-cluster destination, so that each plane's apps go to one replica whatever the counts")
	ownerSampling  = flag.Duration("owner-sampling", 2*time.Second, "with -replicas > 1, how often the initial sync scrapes every replica's argocd_app_info to see apps change hands (0: not at all); each scrape renders a replica's whole /metrics (~300 KB at 300 apps; every 1s added 3-5 CPU-s to three replicas' 16-17 in a 300-app initial sync)")
	waitTimeout    = 10 * time.Minute
	idle           = 60 * time.Second
)

func main() {
	ns := flag.String("n", "50,200", "comma-separated numbers of applications (e.g. 50,200,1000)")
	flag.DurationVar(&waitTimeout, "timeout", waitTimeout, "bound of every wait")
	flag.DurationVar(&idle, "idle", idle, "steady-state window (and the baseline window before skiff starts)")
	flag.Parse()
	if *shape != "web" && *shape != "configmap" {
		fmt.Fprintf(os.Stderr, "bench: bad -shape %q\n", *shape)
		os.Exit(2)
	}
	if *clusterCount < 1 {
		fmt.Fprintf(os.Stderr, "bench: bad -clusters %d\n", *clusterCount)
		os.Exit(2)
	}
	if *replicas < 1 {
		fmt.Fprintf(os.Stderr, "bench: bad -replicas %d\n", *replicas)
		os.Exit(2)
	}
	// Made now: a missing directory would otherwise fail the run only
	// after the floor and the baseline.
	for _, dir := range []string{*logDirFlag, *profileDir} {
		if dir == "" {
			continue
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			os.Exit(2)
		}
	}
	// The bench's own clients have nothing to log; skiff server logs to its file.
	ctrl.SetLogger(logr.Discard())
	var sizes []int
	for _, s := range strings.Split(*ns, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n <= 0 {
			fmt.Fprintf(os.Stderr, "bench: bad -n %q\n", s)
			os.Exit(2)
		}
		sizes = append(sizes, n)
	}
	if err := run(sizes); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

// result is one row of the table.
type result struct {
	n                  int
	floor              time.Duration
	startCPU           float64
	startRSS           float64
	initial            time.Duration
	initialCPU         float64
	initialRSS         float64
	triggered          time.Duration
	triggeredCPU       float64
	polling            time.Duration
	pollingCPU         float64
	steadyCPU          float64 // per minute
	steadyRSS          float64
	apiTotal           float64 // per minute, all clients, skiff running
	apiBaseline        float64 // per minute, all clients, before skiff started
	skiffRequests      float64 // per minute, from skiff's own rest_client_requests_total
	triggeredRequests  float64 // skiff's own API requests during the triggered refresh
	hwm                float64
	anonPeak, fileRSS  float64 // MiB: peak anonymous memory, file-backed RSS then
	logErrors          int
	logErrorLines      []string
	serverLog          string
	skiffMetricsMissed bool
	// Per replica (one, or -replicas), in order; and which replica owned
	// which app after the initial sync and at the end of the run.
	replicas                 []replicaFigures
	sharesInitial, sharesEnd appShares
	// handovers says which apps changed hands during the initial sync.
	handovers string
	// apiserverInitial is each control plane's kube-apiserver CPU in the
	// initial sync.
	apiserverInitial []float64
	// resynced lists the apps whose history holds more than one sync
	// after the initial sync (each was synced once, by one replica).
	resynced []string
}

// replicaFigures are one skiff server's own figures.
type replicaFigures struct {
	name               string
	pid                int
	startCPU, startRSS float64
	initialCPU         float64
	initialRSS         float64
	steadyCPU          float64 // per minute
	hwm                float64
}

func run(sizes []int) error {
	tmp, err := os.MkdirTemp("", "skiff-bench-apps-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	bin := *skiffBin
	if bin == "" {
		if bin, err = benchkit.BuildSkiff(tmp); err != nil {
			return err
		}
	}
	var results []result
	var runErr error
	for _, n := range sizes {
		r, err := runN(n, bin, tmp)
		if err != nil {
			runErr = fmt.Errorf("with %d apps: %w", n, err)
			break
		}
		results = append(results, r)
		printTable(results) // partial results survive a later failure
	}
	return runErr
}
