package main

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/skiffcd/skiff/api/v1alpha1"
	"github.com/skiffcd/skiff/bench/internal/benchkit"
	"github.com/skiffcd/skiff/internal/testcluster"
)

// runN measures one N: the floor, then skiff server on a fresh control
// plane through the phases below.
func runN(n int, bin, tmp string) (res result, err error) {
	res.n = n
	ctx := context.Background()
	fmt.Printf("\n=== N=%d ===\n", n)

	// 1. Floor, on its own control plane.
	floor, err := runFloor(ctx, n)
	if err != nil {
		return res, fmt.Errorf("floor: %w", err)
	}
	res.floor = floor
	fmt.Printf("floor: %d apps applied and Available in %s\n", n, floor.Round(time.Millisecond))

	// 2. Fresh control planes for skiff: it runs against the first, and
	// the others are its targets.
	logDir := tmp
	if *profileDir != "" {
		logDir = *profileDir // kept with the profiles
	}
	if *logDirFlag != "" {
		logDir = *logDirFlag
	}
	var servers replicaSet
	defer func() { _ = servers.closeLogs() }() // after cluster.Stop has ended the servers
	ps, err := startPlanes(ctx, *clusterCount, testcluster.Options{Profiling: *profileDir != ""})
	if err != nil {
		return res, err
	}
	defer ps.stop()
	cluster := ps[0]
	clients, err := ps.clients()
	if err != nil {
		return res, err
	}
	c := clients[0]
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: argocdNS}}); err != nil {
		return res, err
	}
	if err := c.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: argocdNS, Name: "argocd-secret"},
		StringData: map[string]string{"webhook.github.secret": webhookSecret}}); err != nil {
		return res, err
	}
	if err := ps.registerTargets(ctx, c, *pinShards); err != nil {
		return res, err
	}
	repo, err := newRepo(filepath.Join(tmp, fmt.Sprintf("repo-%d", n)), n)
	if err != nil {
		return res, err
	}
	var configs []*rest.Config
	for _, p := range ps {
		configs = append(configs, p.Config)
	}
	metrics, err := newAPIMetrics(configs...)
	if err != nil {
		return res, err
	}
	if res.apiBaseline, err = measureBaseline(ctx, metrics); err != nil {
		return res, err
	}

	started := time.Now()
	servers, err = startReplicas(cluster, n, bin, logDir, tmp)
	res.serverLog = servers.logs()
	if err != nil {
		return res, err
	}
	defer func() {
		res.logErrors, res.logErrorLines = servers.scanLogs()
		if err != nil {
			err = fmt.Errorf("%w\nserver log %s: %d error lines; last ones:\n%s", err, res.serverLog, res.logErrors, strings.Join(res.logErrorLines, "\n"))
		}
	}()
	proc := newProcGroup(servers.pids())
	// The API servers' CPU per phase shows when they, not skiff, are the limit.
	apiserver := newAPIServerMeters(ps.apiserverPIDs())
	defer proc.stop()
	if err := servers.waitReady(ctx, c); err != nil {
		return res, err
	}
	res.startCPU, res.startRSS = proc.phase()
	for i, r := range servers {
		res.replicas = append(res.replicas, replicaFigures{name: r.name, pid: r.pid, startCPU: proc.each[i].cpu, startRSS: proc.each[i].rss})
	}
	if len(servers) == 1 {
		fmt.Printf("skiff server (pid %d) ready in %s: %.2f CPU-s, peak RSS %.1f MiB\n", servers[0].pid, time.Since(started).Round(time.Millisecond), res.startCPU, res.startRSS)
	} else {
		fmt.Printf("%d skiff servers ready and members in %s: %.2f CPU-s in all, largest peak RSS %.1f MiB\n%s",
			len(servers), time.Since(started).Round(time.Millisecond), res.startCPU, res.startRSS, replicaLines(res.replicas, "start"))
	}

	first := servers[0]
	p := &phases{ctx: ctx, n: n, res: &res, c: c, clients: clients, dests: ps.destinations(), repo: repo, metrics: metrics, proc: proc, apiserver: apiserver, servers: servers,
		alive: servers.alive, metricsAddrs: servers.metricsAddrs(), pprofAddr: first.pprofAddr, apiAddr: first.apiAddr}
	if err := p.initialSync(); err != nil {
		return res, err
	}
	if err := p.triggeredRefresh(); err != nil {
		return res, err
	}
	sha, err := p.pollingRefresh()
	if err != nil {
		return res, err
	}
	return res, p.steadyState(sha)
}

// measureBaseline returns the API requests per minute of all clients over
// -idle, before skiff starts.
func measureBaseline(ctx context.Context, metrics *apiMetrics) (float64, error) {
	fmt.Printf("baseline: %s of API requests without skiff...\n", idle)
	base0, err := metrics.total(ctx)
	if err != nil {
		return 0, err
	}
	time.Sleep(idle)
	base1, err := metrics.total(ctx)
	if err != nil {
		return 0, err
	}
	return (base1 - base0) / idle.Minutes(), nil
}

// serverArgs are skiff server's arguments; the API server listens on
// apiPort when -trigger is webhook.
func serverArgs(kubeconfig, cacheDir, metricsAddr, healthAddr, pprofAddr string, apiPort int) []string {
	args := []string{"server",
		"--kubeconfig", kubeconfig,
		"--install-crds",
		"--namespace", argocdNS,
		"--app-resync", appResync.String(),
		"--metrics-bind-address", metricsAddr,
		"--health-probe-bind-address", healthAddr,
		"--cache-dir", cacheDir,
	}
	if *profileDir != "" {
		// Serving pprof turns on heap profile sampling, which costs memory
		// of its own: only a profiling run pays it.
		args = append(args, "--pprof-bind-address", pprofAddr)
	}
	if *replicas > 1 {
		args = append(args, "--leader-elect")
	}
	if *trigger == "webhook" {
		args = append(args, "--address", "127.0.0.1", "--port", strconv.Itoa(apiPort), "--insecure")
	} else {
		args = append(args, "--port", "0") // no API server: the annotations reach the controller
	}
	args = append(args, strings.Fields(*serverFlags)...)
	return args
}

// waitReady waits for skiff server to be ready and the Application kind to
// be served.
func waitReady(ctx context.Context, c client.Client, healthAddr string, alive func() error) error {
	if err := benchkit.WaitReadyz(ctx, healthAddr, 2*time.Minute, pollEvery, alive); err != nil {
		return err
	}
	// The CRDs are installed before the manager starts; wait for the kind to be served.
	return waitFor(ctx, "the Application CRD", time.Minute, alive, func() error {
		return c.List(ctx, &v1alpha1.ApplicationList{}, client.InNamespace(argocdNS))
	})
}

// phases are the measured phases of one N against skiff server, and what
// they share.
type phases struct {
	ctx context.Context
	n   int
	res *result
	c   client.WithWatch
	// clients reach each control plane (the first is c); dests are the
	// servers the apps' destinations name, by plane.
	clients            []client.WithWatch
	dests              []string
	repo               *repo
	metrics            *apiMetrics
	proc               *procGroup
	apiserver          *apiserverMeters
	servers            replicaSet
	alive              func() error
	metricsAddrs       []string
	pprofAddr, apiAddr string
}

// initialSync creates the Applications and waits until all are
// Synced+Healthy.
func (p *phases) initialSync() error {
	ctx, n, c, res, proc, apiserver, metrics, metricsAddrs, pprofAddr := p.ctx, p.n, p.c, p.res, p.proc, p.apiserver, p.metrics, p.metricsAddrs, p.pprofAddr
	stopProfile := startCPUProfile(pprofAddr, fmt.Sprintf("cpu-initial-%d.pprof", n))
	apiserver.phase()
	initQueues0 := scrapeQueues(ctx, metricsAddrs)
	initCompared0, _ := scrapeSkiff(ctx, metricsAddrs, "skiff_app_comparisons_total")
	initAPI0, _ := metrics.series(ctx, "apiserver_request_total")
	start := time.Now()
	// Where each app's time goes, from its creation to Synced+Healthy.
	const (
		appCreated = iota
		appCompared
		opStarted
		deploymentCreated
		opFinished
		deploymentAvailable
		appSyncedHealthy
	)
	steps := newTimeline(start, "created", "first compared", "operation started", "Deployment created",
		"operation finished", "Deployment Available", "Synced+Healthy")
	stopDeployments := p.watchDeployments(steps, deploymentCreated, deploymentAvailable)
	owners := watchOwners(ctx, p.servers)
	defer owners.cancel()
	if err := forEach(n, func(i int) error {
		if err := c.Create(ctx, application(i, p.repo.URL(), p.dests[clusterOf(i, len(p.dests))])); err != nil {
			return err
		}
		steps.mark(appKey(appName(i)), appCreated)
		return nil
	}); err != nil {
		stopDeployments()
		return fmt.Errorf("creating Applications: %w", err)
	}
	created := time.Since(start)
	err := waitApps(ctx, c, n, "Synced+Healthy", p.alive, func(a *v1alpha1.Application) bool {
		key := appKey(a.Name)
		if a.Status.Sync.Status != "" {
			steps.mark(key, appCompared)
		}
		if op := a.Status.OperationState; op != nil {
			steps.mark(key, opStarted)
			if op.Phase == v1alpha1.OperationSucceeded {
				steps.mark(key, opFinished)
			}
		}
		ok := a.Status.Sync.Status == v1alpha1.SyncStatusCodeSynced && a.Status.Health.Status == v1alpha1.HealthStatusHealthy
		if ok {
			steps.mark(key, appSyncedHealthy)
		}
		return ok
	})
	stopDeployments()
	if err != nil {
		cpu, rss := proc.phase()
		return fmt.Errorf("%w\n(initial sync phase so far: %s, %.2f CPU-s, peak RSS %.1f MiB)%s", err, time.Since(start).Round(time.Second), cpu, rss, p.ownersNow(owners))
	}
	res.initial = time.Since(start)
	res.initialCPU, res.initialRSS = proc.phase()
	apiInitial := apiserver.phase()
	res.apiserverInitial = append([]float64(nil), apiserver.each...)
	stopProfile()
	saveProfile(pprofAddr, "heap", fmt.Sprintf("heap-initial-%d.pprof", n))
	fmt.Printf("initial sync: %d apps Synced+Healthy in %s (created in %s): %.2f CPU-s, peak RSS %.1f MiB; kube-apiserver %.1f CPU-s%s\n",
		n, res.initial.Round(time.Millisecond), created.Round(time.Millisecond), res.initialCPU, res.initialRSS, apiInitial, apiserver.split())
	for i := range res.replicas {
		res.replicas[i].initialCPU, res.replicas[i].initialRSS = proc.each[i].cpu, proc.each[i].rss
	}
	if res.resynced, err = appsSyncedTwice(ctx, c); err != nil {
		return err
	}
	if len(res.resynced) > 0 {
		fmt.Printf("initial sync: %d apps synced more than once: %s\n", len(res.resynced), strings.Join(first(res.resynced, 10), ", "))
	}
	if len(p.servers) > 1 {
		if res.sharesInitial, err = countShares(ctx, p.servers, n, len(p.dests)); err != nil {
			return err
		}
		res.handovers = owners.summary()
		fmt.Printf("initial sync, per replica (CPU-s above summed, peak RSS the largest):\n%s  %s\n  %s\n", replicaLines(res.replicas, "initial"), res.sharesInitial, res.handovers)
	}
	// Comparisons per app tell how much of the phase's CPU the live
	// changes (a Deployment's status moving while its pods start) cost.
	initCompared1, _ := scrapeSkiff(ctx, metricsAddrs, "skiff_app_comparisons_total")
	initAPI1, _ := metrics.series(ctx, "apiserver_request_total")
	fmt.Printf("initial sync: apiserver_request_total increases (all clients) by verb and resource:\n%s", benchkit.TopDeltas(benchkit.ByVerbResource(initAPI0), benchkit.ByVerbResource(initAPI1), 12))
	fmt.Printf("initial sync: skiff's work queues (items, mean wait in queue, mean work):\n%s", queueDeltas(initQueues0, scrapeQueues(ctx, metricsAddrs)))
	fmt.Printf("initial sync: comparisons (skiff_app_comparisons_total increases):\n%s", benchkit.TopDeltas(initCompared0, initCompared1, 5))
	fmt.Printf("initial sync: when the apps reached each step (seconds after the clock started):\n%s", steps)
	return nil
}

// watchDeployments marks in steps when each app's Deployment is first seen
// and first Available, on every control plane, until stop is called.
func (p *phases) watchDeployments(steps *timeline, created, availableStep int) (stop func()) {
	counts := appsPerCluster(p.n, len(p.clients))
	var stops []func()
	for j, c := range p.clients {
		stops = append(stops, watchDeployments(p.ctx, c, counts[j], steps, created, availableStep))
	}
	return func() {
		for _, stop := range stops {
			stop()
		}
	}
}

// ownersNow says, for a phase that failed with several replicas, which
// replica reports which apps and which apps changed hands: a stalled
// initial sync is often apps that no replica acts on.
func (p *phases) ownersNow(owners *ownerWatch) string {
	if len(p.servers) == 1 {
		return ""
	}
	shares, err := countShares(p.ctx, p.servers, p.n, len(p.dests))
	if err != nil {
		return fmt.Sprintf("\nowners: %v", err)
	}
	return fmt.Sprintf("\nowners: %s\n%s", shares, owners.summary())
}

// cpuSplit is the last phase's CPU-seconds per replica, when there are
// several: ", of which r1 1.20, r2 …".
func (p *phases) cpuSplit() string {
	if len(p.servers) == 1 {
		return ""
	}
	var parts []string
	for i, r := range p.servers {
		parts = append(parts, fmt.Sprintf("%s %.2f", r.name, p.proc.each[i].cpu))
	}
	return " (" + strings.Join(parts, ", ") + ")"
}

// comparisons returns skiff_app_comparisons_total's series: how many of a
// round's comparisons were computed, how many reused.
func (p *phases) comparisons() map[string]float64 {
	series, _ := scrapeSkiff(p.ctx, p.metricsAddrs, "skiff_app_comparisons_total")
	return series
}

// triggeredRefresh measures -triggered-rounds commits, each found through
// a triggered refresh.
func (p *phases) triggeredRefresh() error {
	ctx, n, c, res, proc, apiserver, metrics, metricsAddrs, pprofAddr, repo, alive := p.ctx, p.n, p.c, p.res, p.proc, p.apiserver, p.metrics, p.metricsAddrs, p.pprofAddr, p.repo, p.alive
	sha, err := repo.touchAll(n, 1)
	if err != nil {
		return err
	}
	stopProfile := startCPUProfile(pprofAddr, fmt.Sprintf("cpu-triggered-%d.pprof", n))
	stopAPIProfile := startAPIServerCPUProfile(metrics, fmt.Sprintf("apiserver-triggered-%d.pprof", n))
	apiserver.phase()
	trigAPI0, _ := metrics.series(ctx, "apiserver_request_total")
	trigOwn0, _ := scrapeSkiff(ctx, metricsAddrs, "rest_client_requests_total")
	trigQueues0 := scrapeQueues(ctx, metricsAddrs)
	compared0 := p.comparisons()
	start := time.Now()
	if err := triggerRefresh(ctx, c, n, p.apiAddr, repo.URL()); err != nil {
		return err
	}
	triggeredIn := time.Since(start)
	if err := waitApps(ctx, c, n, "Synced at "+sha[:8]+" (triggered)", alive, syncedAt(sha)); err != nil {
		return err
	}
	res.triggered = time.Since(start)
	res.triggeredCPU, _ = proc.phase()
	apiTriggered := apiserver.phase()
	stopProfile()
	stopAPIProfile()
	saveProfile(pprofAddr, "heap", fmt.Sprintf("heap-triggered-%d.pprof", n))
	fmt.Printf("commit %s + %s: all synced in %s (triggered in %s), %.2f CPU-s%s; kube-apiserver %.1f CPU-s%s\n",
		sha[:8], *trigger, res.triggered.Round(time.Millisecond), triggeredIn.Round(time.Millisecond), res.triggeredCPU, p.cpuSplit(), apiTriggered, apiserver.split())
	if err := printOperationTimes(ctx, c, start); err != nil {
		return err
	}
	fmt.Print(comparisonCounts(compared0, p.comparisons()))
	// Where the triggered refresh's API requests go, by verb and resource
	// (the bench's own annotation patches and list polls included).
	trigAPI1, _ := metrics.series(ctx, "apiserver_request_total")
	trigOwn1, _ := scrapeSkiff(ctx, metricsAddrs, "rest_client_requests_total")
	res.triggeredRequests = benchkit.SumDeltas(trigOwn0, trigOwn1)
	fmt.Printf("triggered refresh: skiff made %.0f API requests, %.1f per app:\n%s", res.triggeredRequests, res.triggeredRequests/float64(n), benchkit.TopDeltas(trigOwn0, trigOwn1, 10))
	fmt.Printf("triggered refresh: apiserver_request_total increases (all clients) by verb and resource:\n%s", benchkit.TopDeltas(benchkit.ByVerbResource(trigAPI0), benchkit.ByVerbResource(trigAPI1), 20))
	fmt.Printf("triggered refresh: skiff's work queues (items, mean wait in queue, mean work):\n%s", queueDeltas(trigQueues0, scrapeQueues(ctx, metricsAddrs)))

	// More rounds of the same; the median round's figures are reported.
	rounds := []triggeredRound{{res.triggered, res.triggeredCPU, apiTriggered}}
	for round := 2; round <= *triggerRounds; round++ {
		time.Sleep(roundPause) // let the previous round's follow-up work end
		sha, err := repo.touchAll(n, 100+round)
		if err != nil {
			return err
		}
		proc.phase()
		apiserver.phase()
		compared0 := p.comparisons()
		start := time.Now()
		if err := triggerRefresh(ctx, c, n, p.apiAddr, repo.URL()); err != nil {
			return err
		}
		if err := waitApps(ctx, c, n, "Synced at "+sha[:8]+" (triggered)", alive, syncedAt(sha)); err != nil {
			return err
		}
		r := triggeredRound{took: time.Since(start)}
		var rss float64
		r.cpu, rss = proc.phase()
		r.apiserverCPU = apiserver.phase()
		rounds = append(rounds, r)
		if err := printOperationTimes(ctx, c, start); err != nil {
			return err
		}
		fmt.Print(comparisonCounts(compared0, p.comparisons()))
		fmt.Printf("commit %s + %s, round %d: all synced in %s, %.2f CPU-s, peak RSS %.1f MiB; kube-apiserver %.1f CPU-s%s\n",
			sha[:8], *trigger, round, r.took.Round(time.Millisecond), r.cpu, rss, r.apiserverCPU, apiserver.split())
	}
	// The API server's work per Application write grows with the object.
	if err := printAppSize(ctx, c, "app-0000"); err != nil {
		return err
	}
	if len(rounds) > 1 {
		m := medianRound(rounds)
		res.triggered, res.triggeredCPU = m.took, m.cpu
		fmt.Printf("triggered refresh, median of %d rounds: %s, %.2f CPU-s; kube-apiserver %.1f CPU-s\n",
			len(rounds), m.took.Round(time.Millisecond), m.cpu, m.apiserverCPU)
	}
	time.Sleep(roundPause)
	return nil
}

// pollingRefresh measures a commit found by the periodic poll; it returns
// the commit.
func (p *phases) pollingRefresh() (string, error) {
	ctx, n, c, res, proc, alive := p.ctx, p.n, p.c, p.res, p.proc, p.alive
	proc.phase()
	compared0 := p.comparisons()
	sha, err := p.repo.touchAll(n, 2)
	if err != nil {
		return "", err
	}
	start := time.Now()
	if err := waitApps(ctx, c, n, "Synced at "+sha[:8]+" (polling)", alive, syncedAt(sha)); err != nil {
		return "", err
	}
	res.polling = time.Since(start)
	res.pollingCPU, _ = proc.phase()
	fmt.Printf("commit %s, no trigger: all synced in %s, %.2f CPU-s%s\n", sha[:8], res.polling.Round(time.Millisecond), res.pollingCPU, p.cpuSplit())
	if err := printOperationTimes(ctx, c, start); err != nil {
		return "", err
	}
	fmt.Print(comparisonCounts(compared0, p.comparisons()))
	return sha, nil
}

// steadyState measures -idle of steady state and checks that every app is
// still synced at sha.
func (p *phases) steadyState(sha string) error {
	ctx, c, res, proc, metrics, metricsAddrs, pprofAddr, alive := p.ctx, p.c, p.res, p.proc, p.metrics, p.metricsAddrs, p.pprofAddr, p.alive
	fmt.Printf("steady state: %s idle...\n", idle)
	proc.phase()
	api0, err := metrics.total(ctx)
	if err != nil {
		return err
	}
	own0, ownErr := skiffRequests(ctx, metricsAddrs)
	apiSeries0, _ := metrics.series(ctx, "apiserver_request_total")
	ownSeries0, _ := scrapeSkiff(ctx, metricsAddrs, "rest_client_requests_total")
	stopProfile := startCPUProfile(pprofAddr, fmt.Sprintf("cpu-steady-%d.pprof", p.n))
	time.Sleep(idle)
	apiSeries1, _ := metrics.series(ctx, "apiserver_request_total")
	ownSeries1, _ := scrapeSkiff(ctx, metricsAddrs, "rest_client_requests_total")
	fmt.Printf("steady state: top apiserver_request_total increases over %s (all clients):\n%s", idle, benchkit.TopDeltas(apiSeries0, apiSeries1, 10))
	fmt.Printf("steady state: skiff rest_client_requests_total increases over %s:\n%s", idle, benchkit.TopDeltas(ownSeries0, ownSeries1, 10))
	if err := alive(); err != nil {
		return err
	}
	api1, err := metrics.total(ctx)
	if err != nil {
		return err
	}
	own1, ownErr1 := skiffRequests(ctx, metricsAddrs)
	cpu, rss := proc.phase()
	stopProfile()
	res.steadyCPU = cpu / idle.Minutes()
	res.steadyRSS = rss
	res.apiTotal = (api1 - api0) / idle.Minutes()
	if ownErr != nil || ownErr1 != nil {
		res.skiffMetricsMissed = true
		fmt.Printf("skiff's own request counter unavailable: %v %v\n", ownErr, ownErr1)
	} else {
		res.skiffRequests = (own1 - own0) / idle.Minutes()
	}
	res.hwm = proc.hwm()
	res.anonPeak, res.fileRSS = proc.anonPeak()
	for i := range res.replicas {
		res.replicas[i].steadyCPU, res.replicas[i].hwm = proc.each[i].cpu/idle.Minutes(), proc.procs[i].HWM()
	}
	// Still converged?
	var list v1alpha1.ApplicationList
	if err := c.List(ctx, &list, client.InNamespace(argocdNS)); err != nil {
		return err
	}
	bad := 0
	for i := range list.Items {
		if !syncedAt(sha)(&list.Items[i]) {
			bad++
		}
	}
	fmt.Printf("steady state: %.2f CPU-s/min, API %.0f req/min (baseline %.0f), skiff client %.0f req/min, peak RSS %.1f MiB (VmHWM %.1f MiB), %d apps drifted from Synced\n",
		res.steadyCPU, res.apiTotal, res.apiBaseline, res.skiffRequests, res.steadyRSS, res.hwm, bad)
	if len(p.servers) > 1 {
		if res.sharesEnd, err = countShares(ctx, p.servers, p.n, len(p.dests)); err != nil {
			return err
		}
		fmt.Printf("steady state, per replica:\n%s  %s\n", replicaLines(res.replicas, "steady"), res.sharesEnd)
	}
	return nil
}
