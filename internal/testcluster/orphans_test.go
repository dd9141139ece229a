package testcluster_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/skiffcd/skiff/internal/testcluster"
	"github.com/skiffcd/skiff/internal/testwait"
)

// A test binary killed with SIGKILL (a CI timeout, a Ctrl-C'd `go test`)
// gets no chance to clean up; its control plane must die with it anyway.
func TestKilledOwnerLeavesNoProcessBehind(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	child := exec.CommandContext(ctx, os.Args[0], "-test.run=^$")
	child.Env = append(os.Environ(), orphanChildEnv+"=1")
	child.Stderr = os.Stderr
	out, err := child.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	pids := map[string]int{}
	var dir string
	lines := bufio.NewScanner(out)
	for lines.Scan() {
		f := strings.Fields(lines.Text())
		switch {
		case len(f) == 3 && f[0] == "pid":
			pid, err := strconv.Atoi(f[1])
			if err != nil {
				t.Fatalf("bad line %q", lines.Text())
			}
			pids[f[2]] = pid
		case len(f) == 2 && f[0] == "dir":
			dir = f[1]
		case len(f) == 1 && f[0] == "ready":
			goto started
		}
	}
	t.Fatalf("child exited before its cluster was ready: %v", child.Wait())
started:
	if dir != "" {
		t.Cleanup(func() { _ = os.RemoveAll(dir) })
	}
	for _, name := range []string{"etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "kwok"} {
		if pids[name] == 0 || !testcluster.Alive(pids[name]) {
			t.Fatalf("%s is not running in the child's cluster (pids %v)", name, pids)
		}
	}

	if err := child.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = child.Wait()

	testwait.Eventually(t, "the killed owner's control plane to exit", func() error {
		var left []string
		for name, pid := range pids {
			if testcluster.Alive(pid) {
				left = append(left, name)
			}
		}
		if len(left) > 0 {
			return fmt.Errorf("still running: %v", left)
		}
		return nil
	})
}
