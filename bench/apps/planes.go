package main

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/skiffcd/skiff/bench/internal/benchkit"
	"github.com/skiffcd/skiff/internal/clusters"
	"github.com/skiffcd/skiff/internal/testcluster"
)

// planes are a run's control planes (-clusters): the first hosts skiff and
// the Applications, the others are targets registered by cluster Secrets.
// With one, it is the one control plane of every run before -clusters.
type planes []*testcluster.Cluster

// startPlanes starts k control planes, one after another (their starts
// share the machine's two cores and its port lock).
func startPlanes(ctx context.Context, k int, opts testcluster.Options) (planes, error) {
	var ps planes
	for range k {
		c, err := testcluster.Start(ctx, opts)
		if err != nil {
			ps.stop()
			return nil, err
		}
		ps = append(ps, c)
	}
	return ps, nil
}

// stop ends every control plane.
func (ps planes) stop() {
	for _, c := range ps {
		c.Stop()
	}
}

// clients returns a client of each control plane.
func (ps planes) clients() ([]client.WithWatch, error) {
	var cs []client.WithWatch
	for _, p := range ps {
		c, err := newClient(p.Config)
		if err != nil {
			return nil, err
		}
		cs = append(cs, c)
	}
	return cs, nil
}

// apiserverPIDs returns each control plane's kube-apiserver.
func (ps planes) apiserverPIDs() []int {
	var pids []int
	for _, p := range ps {
		pids = append(pids, p.PIDs()["kube-apiserver"])
	}
	return pids
}

// clusterOf is the control plane app i deploys to: apps are dealt out to
// the k planes in turn.
func clusterOf(i, k int) int { return i % k }

// appsPerCluster counts the apps of each of the k control planes.
func appsPerCluster(n, k int) []int {
	counts := make([]int, k)
	for i := range n {
		counts[clusterOf(i, k)]++
	}
	return counts
}

// targetName is the name of target plane j (1…k-1) in its cluster Secret.
func targetName(j int) string { return fmt.Sprintf("target-%d", j) }

// destinations are the servers the apps' destinations name, by plane: the
// first plane is the in-cluster destination, the others the servers their
// cluster Secrets register.
func (ps planes) destinations() []string {
	dests := []string{clusters.InClusterServer}
	for _, p := range ps[1:] {
		dests = append(dests, p.Config.Host)
	}
	return dests
}

// registerTargets writes, into skiff's namespace of the first plane, the
// cluster Secret of every other plane, with its admin token and CA as the
// multi-cluster tests of the Application controller register theirs. With
// pin, plane j's Secret holds shard j, and the first plane gets a Secret
// of the in-cluster destination (no credentials: skiff's own) with shard 0.
func (ps planes) registerTargets(ctx context.Context, c client.Client, pin bool) error {
	var regs []clusters.Cluster
	if pin {
		regs = append(regs, clusters.Cluster{Name: clusters.InClusterName, Server: clusters.InClusterServer, Shard: new(0)})
	}
	for j, p := range ps[1:] {
		target := clusters.Cluster{Name: targetName(j + 1), Server: p.Config.Host, Config: clusters.Config{
			BearerToken:     p.Config.BearerToken,
			TLSClientConfig: clusters.TLSClientConfig{CAData: p.Config.CAData},
		}}
		if pin {
			target.Shard = new(j + 1)
		}
		regs = append(regs, target)
	}
	for _, target := range regs {
		secret, err := target.ToSecret(argocdNS)
		if err != nil {
			return err
		}
		if err := c.Create(ctx, secret); err != nil {
			return fmt.Errorf("registering %s: %w", target, err)
		}
	}
	return nil
}

// apiserverMeters reads every control plane's kube-apiserver CPU per
// phase; each holds the last phase's figure per plane.
type apiserverMeters struct {
	meters []*benchkit.CPUMeter
	each   []float64
}

func newAPIServerMeters(pids []int) *apiserverMeters {
	m := &apiserverMeters{}
	for _, pid := range pids {
		m.meters = append(m.meters, benchkit.NewCPUMeter(pid))
	}
	return m
}

// phase returns the CPU-seconds of every kube-apiserver since the previous
// call, summed.
func (m *apiserverMeters) phase() float64 {
	m.each = m.each[:0]
	sum := 0.0
	for _, meter := range m.meters {
		cpu := meter.Phase()
		m.each = append(m.each, cpu)
		sum += cpu
	}
	return sum
}

// split is the last phase's CPU-seconds per control plane, when there are
// several: " (per control plane 12.3 / 4.5 / 4.6)".
func (m *apiserverMeters) split() string {
	if len(m.each) < 2 {
		return ""
	}
	return " (per control plane " + joinFloats(m.each, " / ") + ")"
}

// joinFloats formats vs with one decimal, joined by sep.
func joinFloats(vs []float64, sep string) string {
	var parts []string
	for _, v := range vs {
		parts = append(parts, strconv.FormatFloat(v, 'f', 1, 64))
	}
	return strings.Join(parts, sep)
}

// sharesPerCluster counts, for each replica (in the order of names), the
// apps it reports on each of k control planes; owners is scrapeOwners'
// answer (replicas by app name). Names that are not the bench's apps are
// left out.
func sharesPerCluster(owners map[string][]string, names []string, k int) [][]int {
	index := map[string]int{}
	counts := make([][]int, len(names))
	for r, name := range names {
		index[name] = r
		counts[r] = make([]int, k)
	}
	for app, by := range owners {
		i, err := strconv.Atoi(strings.TrimPrefix(app, "app-"))
		if err != nil || !strings.HasPrefix(app, "app-") {
			continue
		}
		for _, replica := range by {
			if r, known := index[replica]; known {
				counts[r][clusterOf(i, k)]++
			}
		}
	}
	return counts
}
