package main

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/skiffcd/skiff/internal/testcluster"
	"github.com/skiffcd/skiff/internal/testwait"
)

// The README's run command starts the control plane and skiff server, which
// installs the CRDs and answers its health check; the demo's apps sync and
// its Rollout promotes the image the demo commits; Ctrl-C stops every
// process it started.
func TestRunStartsSkiffAndCtrlCStopsEverything(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	dir := t.TempDir()
	skiff := filepath.Join(dir, "skiff")
	runner := filepath.Join(dir, "devcluster")
	for bin, pkg := range map[string]string{skiff: "../../cmd/skiff", runner: "."} {
		if out, err := exec.CommandContext(ctx, "go", "build", "-o", bin, pkg).CombinedOutput(); err != nil {
			t.Fatalf("building %s: %v\n%s", pkg, err, out)
		}
	}
	health, metrics := freeAddr(t), freeAddr(t)
	cmd := exec.CommandContext(ctx, runner, "--skiff", skiff,
		"--health-probe-bind-address", health, "--metrics-bind-address", metrics,
		"--examples", "../../examples")
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill() })

	pidLine := regexp.MustCompile(`pid (\d+)`)
	pids := map[int]bool{}
	var kubeconfig string
	lines := bufio.NewScanner(out)
	for lines.Scan() {
		line := lines.Text()
		t.Log(line)
		if m := pidLine.FindStringSubmatch(line); m != nil {
			pid, _ := strconv.Atoi(m[1])
			pids[pid] = true
		}
		if i := strings.Index(line, "KUBECONFIG="); i >= 0 {
			kubeconfig = line[i+len("KUBECONFIG="):]
		}
		if strings.HasPrefix(line, "Ctrl-C stops everything") {
			break
		}
	}
	// Keep draining so the runner never blocks on a full pipe.
	go func() {
		for lines.Scan() {
			t.Log(lines.Text())
		}
	}()
	if len(pids) != 6 || kubeconfig == "" {
		t.Fatalf("runner printed %d distinct pids (want 5 components and skiff server) and kubeconfig %q", len(pids), kubeconfig)
	}

	client := &http.Client{Timeout: 2 * time.Second}
	testwait.Eventually(t, "skiff server to be healthy at "+health, func() error {
		resp, err := client.Get("http://" + health + "/healthz")
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("/healthz: %s", resp.Status)
		}
		return nil
	}, testwait.Timeout(2*time.Minute), testwait.Interval(200*time.Millisecond))
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	ext, err := apiextensionsclient.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"applications.argoproj.io", "rollouts.argoproj.io", "analysisruns.argoproj.io"} {
		if _, err := ext.ApiextensionsV1().CustomResourceDefinitions().Get(ctx, name, metav1.GetOptions{}); err != nil {
			t.Errorf("CRD %s not installed by skiff server: %v", name, err)
		}
	}

	checkDemo(ctx, t, cfg)

	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("runner exited with %v after Ctrl-C, want success", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("runner still running a minute after Ctrl-C")
	}
	var left []string
	for pid := range pids {
		if testcluster.Alive(pid) {
			left = append(left, fmt.Sprint(pid))
		}
	}
	if len(left) > 0 {
		t.Errorf("processes still running after the runner exited: %v", left)
	}
}

func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}
