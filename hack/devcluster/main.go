// Command devcluster is the README's run command (`make run`): it starts the
// local control plane (unless a kubeconfig is given), then `skiff server`
// with the CRDs installed, seeds a local git repository with examples/ and
// creates its Applications (the demo; --demo=false leaves it out), prints
// what runs where, and on Ctrl-C (or SIGTERM) stops everything it started.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"sort"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/skiffcd/skiff/internal/testcluster"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "devcluster:", err)
		os.Exit(1)
	}
}

func run() error {
	skiff := flag.String("skiff", "bin/skiff", "path of the skiff binary")
	kubeconfig := flag.String("kubeconfig", "", "use this cluster instead of starting a local one")
	metrics := flag.String("metrics-bind-address", "127.0.0.1:8082", "skiff server metrics address")
	apiPort := flag.Int("port", 8080, "skiff server API port (on 127.0.0.1)")
	health := flag.String("health-probe-bind-address", "127.0.0.1:8081", "skiff server health address")
	withDemo := flag.Bool("demo", true, "seed a local git repository with the examples and create their Applications (local control plane only)")
	examples := flag.String("examples", "examples", "the examples folder the demo commits")
	flag.Parse()
	// Cluster processes run in the cluster's directory: a relative path
	// would not resolve there.
	skiffPath, err := filepath.Abs(*skiff)
	if err != nil {
		return err
	}
	skiff = &skiffPath

	serverArgs := []string{"server", "--install-crds",
		"--metrics-bind-address=" + *metrics, "--health-probe-bind-address=" + *health,
		"--address=127.0.0.1", fmt.Sprintf("--port=%d", *apiPort)}
	serverArgs = append(serverArgs, flag.Args()...)

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	if *kubeconfig != "" {
		cmd := exec.CommandContext(ctx, *skiff, append(serverArgs, "--kubeconfig="+*kubeconfig)...)
		cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
		cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
		cmd.WaitDelay = 10 * time.Second
		fmt.Printf("skiff server against %s; Ctrl-C stops it\n", *kubeconfig)
		if err := cmd.Run(); err != nil && ctx.Err() == nil {
			return fmt.Errorf("skiff server: %w", err)
		}
		return nil
	}

	fmt.Println("starting the local control plane (the first run builds it: several minutes)...")
	start := time.Now()
	cluster, err := testcluster.Start(ctx, testcluster.Options{})
	if err != nil {
		return err
	}
	defer func() {
		fmt.Println("stopping skiff server and the local control plane...")
		cluster.Stop()
		fmt.Println("stopped")
	}()
	// Skiff's configuration (argocd-secret with the admin password) and
	// Applications live in argocd, as in an Argo CD installation.
	if err := createNamespace(ctx, cluster, "argocd"); err != nil {
		return err
	}
	pid, exited, err := cluster.StartProcess("skiff-server", os.Stderr, *skiff,
		append(serverArgs, "--kubeconfig="+cluster.Kubeconfig)...)
	if err != nil {
		return err
	}

	var shown *demo
	if *withDemo {
		if shown, err = startDemo(ctx, cluster, *examples, os.Stdout); err != nil {
			return fmt.Errorf("demo: %w", err)
		}
	}

	fmt.Printf("local control plane up in %s\n", time.Since(start).Round(100*time.Millisecond))
	fmt.Printf("  kube-apiserver   %s\n", cluster.Config.Host)
	pids := cluster.PIDs()
	names := make([]string, 0, len(pids))
	for name := range pids {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		fmt.Printf("  pid %-8d %s\n", pids[name], name)
	}
	fmt.Printf("  skiff server     health http://%s/healthz, metrics http://%s/metrics (pid %d)\n", *health, *metrics, pid)
	fmt.Printf("  web UI and API   https://localhost:%d (self-signed certificate), user admin\n", *apiPort)
	fmt.Printf("  admin password   kubectl -n argocd get secret argocd-initial-admin-secret -o jsonpath='{.data.password}' | base64 -d\n")
	fmt.Printf("  logs             %s\n", cluster.Dir)
	fmt.Printf("  kubectl          export KUBECONFIG=%s\n", cluster.Kubeconfig)
	if shown != nil {
		fmt.Printf("  demo             Applications guestbook and %s from %s (commit there; the apps follow)\n", demoRolloutApp, shown.repo.URL())
	}
	fmt.Println("Ctrl-C stops everything.")

	select {
	case <-ctx.Done():
		return nil
	case <-exited:
		return fmt.Errorf("skiff server exited; see %s/skiff-server.log", cluster.Dir)
	}
}

// createNamespace creates a namespace unless it exists.
func createNamespace(ctx context.Context, cluster *testcluster.Cluster, name string) error {
	cs, err := kubernetes.NewForConfig(cluster.Config)
	if err != nil {
		return err
	}
	_, err = cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating namespace %s: %w", name, err)
	}
	return nil
}
