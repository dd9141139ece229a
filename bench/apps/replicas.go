package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/skiffcd/skiff/bench/internal/benchkit"
	"github.com/skiffcd/skiff/internal/shard"
	"github.com/skiffcd/skiff/internal/testcluster"
)

// memberListing is how long every replica takes to see the others once
// their Leases exist: two of skiff's default lease retry periods (each
// member renews its Lease and lists the others every period).
const memberListing = 2 * 2 * time.Second

// replica is one `skiff server` process of a run. With -replicas 1 it is
// the one server, run as before; with more, each runs with --leader-elect
// and they share the apps (internal/shard).
type replica struct {
	name                                        string
	pid                                         int
	exited                                      <-chan struct{}
	log                                         string
	logFile                                     *os.File
	metricsAddr, healthAddr, pprofAddr, apiAddr string
}

// replicaSet is a run's skiff servers, the first of them the one the
// webhook and the profiles go to.
type replicaSet []*replica

// startReplicas starts -replicas skiff servers for the run of n apps, each
// with its ports, cache directory and log (in logDir) of its own.
func startReplicas(cluster *testcluster.Cluster, n int, bin, logDir, tmp string) (replicaSet, error) {
	var servers replicaSet
	for i := 1; i <= *replicas; i++ {
		name, suffix := "skiff", strconv.Itoa(n)
		if *replicas > 1 {
			name, suffix = fmt.Sprintf("skiff-r%d", i), fmt.Sprintf("%d-r%d", n, i)
		}
		r, err := startReplica(cluster, name, suffix, bin, logDir, tmp)
		if r != nil {
			servers = append(servers, r)
		}
		if err != nil {
			return servers, err
		}
	}
	return servers, nil
}

// startReplica starts one skiff server named name; suffix names its log
// (skiff-SUFFIX.log) and its cache directory.
func startReplica(cluster *testcluster.Cluster, name, suffix, bin, logDir, tmp string) (*replica, error) {
	ports, err := testcluster.FreePorts(4)
	if err != nil {
		return nil, err
	}
	r := &replica{name: name, log: filepath.Join(logDir, "skiff-"+suffix+".log"),
		metricsAddr: fmt.Sprintf("127.0.0.1:%d", ports[0]),
		healthAddr:  fmt.Sprintf("127.0.0.1:%d", ports[1]),
		pprofAddr:   fmt.Sprintf("127.0.0.1:%d", ports[2]),
		apiAddr:     fmt.Sprintf("127.0.0.1:%d", ports[3])}
	if r.logFile, err = os.Create(r.log); err != nil {
		return nil, err
	}
	args := serverArgs(cluster.Kubeconfig, filepath.Join(tmp, "cache-"+suffix), r.metricsAddr, r.healthAddr, r.pprofAddr, ports[3])
	if r.pid, r.exited, err = cluster.StartProcess(name, r.logFile, bin, args...); err != nil {
		return r, err
	}
	return r, nil
}

// alive fails when any server has exited, with its log's tail.
func (rs replicaSet) alive() error {
	for _, r := range rs {
		select {
		case <-r.exited:
			return fmt.Errorf("skiff server %s exited; log tail:\n%s", r.name, benchkit.Tail(r.log, 30))
		default:
		}
	}
	return nil
}

// waitReady waits for every server to be ready (see waitReady) and, when
// they share the apps, for each to know the others.
func (rs replicaSet) waitReady(ctx context.Context, c client.Client) error {
	for _, r := range rs {
		if err := waitReady(ctx, c, r.healthAddr, rs.alive); err != nil {
			return fmt.Errorf("%s: %w", r.name, err)
		}
	}
	if len(rs) == 1 {
		return nil
	}
	// Apps created before every member sees every other would be assigned
	// again as the members appear, and handed over after a delay: a start
	// the benchmark does not mean to measure.
	if err := waitFor(ctx, fmt.Sprintf("%d member Leases", len(rs)), time.Minute, rs.alive, func() error {
		var leases coordinationv1.LeaseList
		if err := c.List(ctx, &leases, client.InNamespace(argocdNS), client.MatchingLabels{shard.MemberLabel: "true"}); err != nil {
			return err
		}
		if len(leases.Items) < len(rs) {
			return fmt.Errorf("%d of %d member Leases", len(leases.Items), len(rs))
		}
		return nil
	}); err != nil {
		return err
	}
	time.Sleep(memberListing)
	return nil
}

func (rs replicaSet) pids() []int {
	var pids []int
	for _, r := range rs {
		pids = append(pids, r.pid)
	}
	return pids
}

func (rs replicaSet) metricsAddrs() []string {
	var addrs []string
	for _, r := range rs {
		addrs = append(addrs, r.metricsAddr)
	}
	return addrs
}

// logs names the servers' logs.
func (rs replicaSet) logs() string {
	var paths []string
	for _, r := range rs {
		paths = append(paths, r.log)
	}
	return strings.Join(paths, ", ")
}

// scanLogs counts the error lines of every server's log and returns the
// last ones of each (named by server when there are several).
func (rs replicaSet) scanLogs() (int, []string) {
	total := 0
	var last []string
	for _, r := range rs {
		count, lines := scanLog(r.log)
		total += count
		for _, l := range lines {
			if len(rs) > 1 {
				l = r.name + ": " + l
			}
			last = append(last, l)
		}
	}
	return total, last
}

// closeLogs closes the servers' log files, once they have ended.
func (rs replicaSet) closeLogs() error {
	var errs []error
	for _, r := range rs {
		errs = append(errs, r.logFile.Close())
	}
	return errors.Join(errs...)
}
