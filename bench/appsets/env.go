package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/skiffcd/skiff/api/v1alpha1"
	"github.com/skiffcd/skiff/bench/internal/benchkit"
	"github.com/skiffcd/skiff/internal/testcluster"
)

const (
	argocdNS = "argocd"
	// appsNS is where every app's ConfigMap goes.
	appsNS    = "bench-apps"
	inFlight  = 20
	pollEvery = 500 * time.Millisecond
	// webhookSecret signs the push event; skiff reads it from
	// argocd-secret's webhook.github.secret.
	webhookSecret = "bench-webhook-secret"
)

// env is one phase's control plane and skiff server.
type env struct {
	cluster *testcluster.Cluster
	c       client.WithWatch
	proc    *benchkit.ProcWatch
	pid     int
	exited  <-chan struct{}
	log     string
	apiAddr string
}

// startEnv starts a control plane and skiff server (API on 127.0.0.1 for
// the webhook) and waits until it serves ApplicationSets.
func startEnv(ctx context.Context, name, bin, logDir, tmp string) (*env, error) {
	cluster, err := testcluster.Start(ctx, testcluster.Options{})
	if err != nil {
		return nil, err
	}
	e := &env{cluster: cluster, log: filepath.Join(logDir, "skiff-"+name+".log")}
	if e.c, err = benchkit.NewClient(cluster.Config); err != nil {
		e.stop()
		return nil, err
	}
	if err := e.c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: argocdNS}}); err != nil {
		e.stop()
		return nil, err
	}
	if err := e.c.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: argocdNS, Name: "argocd-secret"},
		StringData: map[string]string{"webhook.github.secret": webhookSecret}}); err != nil {
		e.stop()
		return nil, err
	}
	ports, err := testcluster.FreePorts(3)
	if err != nil {
		e.stop()
		return nil, err
	}
	healthAddr := fmt.Sprintf("127.0.0.1:%d", ports[1])
	e.apiAddr = fmt.Sprintf("127.0.0.1:%d", ports[2])
	logFile, err := os.Create(e.log)
	if err != nil {
		e.stop()
		return nil, err
	}
	started := time.Now()
	e.pid, e.exited, err = cluster.StartProcess("skiff", logFile, bin, "server",
		"--kubeconfig", cluster.Kubeconfig, "--install-crds", "--namespace", argocdNS,
		"--metrics-bind-address", fmt.Sprintf("127.0.0.1:%d", ports[0]), "--health-probe-bind-address", healthAddr,
		"--cache-dir", filepath.Join(tmp, "cache-"+name),
		"--address", "127.0.0.1", "--port", strconv.Itoa(ports[2]), "--insecure")
	if err != nil {
		e.stop()
		return nil, err
	}
	e.proc = benchkit.NewProcWatch(e.pid)
	if err := e.waitReady(ctx, healthAddr); err != nil {
		e.stop()
		return nil, err
	}
	cpu, rss := e.proc.Phase()
	fmt.Printf("skiff server (pid %d) ready in %s: %.2f CPU-s, peak RSS %.1f MiB\n", e.pid, time.Since(started).Round(time.Millisecond), cpu, rss)
	return e, nil
}

// alive fails once skiff server has exited.
func (e *env) alive() error {
	select {
	case <-e.exited:
		return errors.New("skiff server exited")
	default:
		return nil
	}
}

// waitReady waits for /readyz and for Applications and ApplicationSets
// to be served.
func (e *env) waitReady(ctx context.Context, healthAddr string) error {
	if err := benchkit.WaitReadyz(ctx, healthAddr, 2*time.Minute, pollEvery, e.alive); err != nil {
		return err
	}
	return benchkit.WaitFor(ctx, "the Application and ApplicationSet CRDs", time.Minute, pollEvery, e.alive, func() error {
		if err := e.c.List(ctx, &v1alpha1.ApplicationList{}, client.InNamespace(argocdNS)); err != nil {
			return err
		}
		return e.c.List(ctx, &v1alpha1.ApplicationSetList{}, client.InNamespace(argocdNS))
	})
}

func (e *env) stop() {
	if e.proc != nil {
		e.proc.Stop()
	}
	e.cluster.Stop()
}
