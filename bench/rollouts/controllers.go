package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/skiffcd/skiff/api/v1alpha1"
	"github.com/skiffcd/skiff/bench/internal/benchkit"
	"github.com/skiffcd/skiff/internal/testcluster"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// controller is the process that does a run's work: kube-controller-manager
// for the floor, Argo Rollouts' controller or skiff server.
type controller struct {
	name string
	pid  int
	// exited closes when a process this bench started ends; nil for
	// kube-controller-manager, which lives as long as the control plane.
	exited <-chan struct{}
	log    string
	// pprofAddr serves skiff's /debug/pprof (with -profile).
	pprofAddr string
}

// alive fails once the controller has exited.
func (c *controller) alive() error {
	if c.exited == nil {
		return nil
	}
	select {
	case <-c.exited:
		return fmt.Errorf("%s exited", c.name)
	default:
		return nil
	}
}

// stop ends a process this bench started: SIGTERM to its group, SIGKILL
// after 10 s.
func (c *controller) stop() {
	if c.exited == nil {
		return
	}
	_ = syscall.Kill(-c.pid, syscall.SIGTERM)
	select {
	case <-c.exited:
	case <-time.After(10 * time.Second):
		_ = syscall.Kill(-c.pid, syscall.SIGKILL)
		<-c.exited
	}
}

// controllerManager is the floor's controller: the control plane's own.
func controllerManager(cluster *testcluster.Cluster) (*controller, error) {
	pid, ok := cluster.PIDs()["kube-controller-manager"]
	if !ok {
		return nil, errors.New("the control plane runs no kube-controller-manager")
	}
	return &controller{name: "kube-controller-manager", pid: pid, log: filepath.Join(cluster.Dir, "kube-controller-manager.log")}, nil
}

// startArgoRollouts runs Argo Rollouts' controller (v1.10.2) watching only
// ns, as the takeover test runs it, and waits until its workers run.
func startArgoRollouts(ctx context.Context, cluster *testcluster.Cluster, ns, logDir string) (*controller, error) {
	bin, err := testcluster.EnsureArgoRolloutsController()
	if err != nil {
		return nil, err
	}
	c := &controller{name: "argo-rollouts", log: filepath.Join(logDir, "argo-rollouts-"+ns+".log")}
	out, err := os.Create(c.log)
	if err != nil {
		return nil, err
	}
	started := time.Now()
	c.pid, c.exited, err = cluster.StartProcess("argo-rollouts-"+ns, out, bin,
		"--kubeconfig", cluster.Kubeconfig, "--namespaced", "--namespace", ns,
		"--leader-elect=false", "--metricsPort=0", "--healthzPort=0")
	if err != nil {
		out.Close()
		return nil, err
	}
	closeOnExit(out, c.exited)
	// Its health server says nothing of the informers; its log does.
	err = benchkit.WaitFor(ctx, "Argo Rollouts' workers", 2*time.Minute, 200*time.Millisecond, c.alive, func() error {
		data, err := os.ReadFile(c.log)
		if err != nil {
			return err
		}
		if !strings.Contains(string(data), "Started controller") {
			return errors.New(`no "Started controller" in its log yet`)
		}
		return nil
	})
	if err != nil {
		c.stop()
		return nil, err
	}
	fmt.Printf("Argo Rollouts (pid %d) started in %s\n", c.pid, time.Since(started).Round(time.Millisecond))
	return c, nil
}

// startSkiff runs `skiff server` as shipped, with only what running out of
// the cluster needs: a kubeconfig and local ports (and pprof with
// -profile). The argoproj.io CRDs are already installed.
func startSkiff(ctx context.Context, cluster *testcluster.Cluster, c client.Client, bin, logDir, tmp string) (*controller, error) {
	ports, err := testcluster.FreePorts(4)
	if err != nil {
		return nil, err
	}
	healthAddr := fmt.Sprintf("127.0.0.1:%d", ports[1])
	s := &controller{name: "skiff", log: filepath.Join(logDir, "skiff-server.log")}
	args := []string{"server", "--kubeconfig", cluster.Kubeconfig, "--namespace", argocdNS,
		"--metrics-bind-address", fmt.Sprintf("127.0.0.1:%d", ports[0]), "--health-probe-bind-address", healthAddr,
		"--cache-dir", filepath.Join(tmp, "skiff-cache"),
		"--address", "127.0.0.1", "--port", strconv.Itoa(ports[2]), "--insecure"}
	if *profileDir != "" {
		s.pprofAddr = fmt.Sprintf("127.0.0.1:%d", ports[3])
		args = append(args, "--pprof-bind-address", s.pprofAddr)
	}
	out, err := os.Create(s.log)
	if err != nil {
		return nil, err
	}
	started := time.Now()
	s.pid, s.exited, err = cluster.StartProcess("skiff", out, bin, args...)
	if err != nil {
		out.Close()
		return nil, err
	}
	closeOnExit(out, s.exited)
	err = benchkit.WaitReadyz(ctx, healthAddr, 2*time.Minute, pollEvery, s.alive)
	if err == nil {
		err = benchkit.WaitFor(ctx, "the Rollout kind", time.Minute, pollEvery, s.alive, func() error {
			return c.List(ctx, &v1alpha1.RolloutList{}, client.InNamespace(argocdNS))
		})
	}
	if err != nil {
		s.stop()
		return nil, err
	}
	fmt.Printf("skiff server (pid %d) ready in %s\n", s.pid, time.Since(started).Round(time.Millisecond))
	return s, nil
}

// closeOnExit closes a process's log once it has exited (the process
// writes it until then).
func closeOnExit(f *os.File, exited <-chan struct{}) {
	go func() {
		<-exited
		f.Close()
	}()
}

// startProfile starts a CPU profile of -profile-seconds of skiff (with
// -profile) and returns the function that waits until it is saved and
// says whether there was one.
func (c *controller) startProfile(name string) (wait func() bool) {
	if c.pprofAddr == "" {
		return func() bool { return false }
	}
	saved := benchkit.StartCPUProfile(http.DefaultClient, "http://"+c.pprofAddr, *profileSeconds, *profileDir, name)
	return func() bool {
		saved()
		return true
	}
}

// saveHeapProfile saves skiff's heap profile (with -profile).
func (c *controller) saveHeapProfile(name string) {
	if c.pprofAddr == "" {
		return
	}
	benchkit.FetchProfile(context.Background(), http.DefaultClient, "http://"+c.pprofAddr+"/debug/pprof/heap", *profileDir, name)
}
