package render

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A template that loops for minutes: 10⁸ iterations of Go's template engine.
const helmLoopTemplate = `{{- range $i := until 10000 }}{{- range $j := until 10000 }}{{- end }}{{- end }}
apiVersion: v1
kind: ConfigMap
metadata:
  name: never
`

// A Jsonnet program that computes for minutes without growing: 4·10⁸
// additions, the inner array collected after each outer step.
const jsonnetLoop = `std.foldl(function(acc, x) acc + std.foldl(function(a, y) a + y, std.range(1, 20000), 0), std.range(1, 20000), 0)`

func loopingHelmChart(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	writeTree(t, root, map[string]string{
		"app/Chart.yaml":          "apiVersion: v2\nname: loop\nversion: 0.1.0\n",
		"app/templates/loop.yaml": helmLoopTemplate,
	})
	return root
}

func loopingJsonnet(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	writeTree(t, root, map[string]string{"app/loop.jsonnet": jsonnetLoop})
	return root
}

// renderWithin runs Render and fails the test if it has not returned
// within wait; a render that ignores its deadline would otherwise hang the
// test.
func renderWithin(t *testing.T, ctx context.Context, req Request, wait time.Duration) error {
	t.Helper()
	done := make(chan error, 1)
	go func() {
		_, err := Render(ctx, req)
		done <- err
	}()
	select {
	case err := <-done:
		return err
	case <-time.After(wait):
		t.Fatalf("Render has not returned %s after it started", wait)
		return nil
	}
}

// process is a child process as /proc shows it.
type process struct {
	pid    int
	zombie bool
	cpu    time.Duration // user and system time so far
}

// children lists the child processes of pid from /proc.
func children(pid int) []process {
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	var out []process
	for _, p := range stats {
		data, err := os.ReadFile(p)
		if err != nil {
			continue // exited meanwhile
		}
		// pid (comm) state ppid ... utime(14) stime(15); comm may hold spaces.
		fields := strings.Fields(string(data[bytes.LastIndexByte(data, ')')+1:]))
		if len(fields) < 13 {
			continue
		}
		if ppid, _ := strconv.Atoi(fields[1]); ppid != pid {
			continue
		}
		child, _ := strconv.Atoi(filepath.Base(filepath.Dir(p)))
		utime, _ := strconv.ParseInt(fields[11], 10, 64)
		stime, _ := strconv.ParseInt(fields[12], 10, 64)
		out = append(out, process{pid: child, zombie: fields[0] == "Z", cpu: time.Duration(utime+stime) * (time.Second / 100)}) // USER_HZ
	}
	return out
}

// processTreeCPU is the CPU time used so far by this process, its reaped
// children and its live children (a killed worker not yet reaped, or a
// worker never killed, is in no rusage).
func processTreeCPU(t *testing.T) time.Duration {
	t.Helper()
	var self, reaped syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &self); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Getrusage(syscall.RUSAGE_CHILDREN, &reaped); err != nil {
		t.Fatal(err)
	}
	total := time.Duration(self.Utime.Nano() + self.Stime.Nano() + reaped.Utime.Nano() + reaped.Stime.Nano())
	for _, c := range children(os.Getpid()) {
		total += c.cpu
	}
	return total
}

// cpuOverWindow is the CPU time the process tree uses during window.
func cpuOverWindow(t *testing.T, window time.Duration) time.Duration {
	t.Helper()
	before := processTreeCPU(t)
	time.Sleep(window)
	return processTreeCPU(t) - before
}

// A render that runs past its deadline stops there, says so, and gives its
// CPU back: nothing keeps computing once Render has returned.
func TestRenderStopsAtItsDeadlineAndReleasesTheCPU(t *testing.T) {
	tests := map[string]struct {
		root func(t *testing.T) string
	}{
		"a Helm template looping over a huge range": {root: loopingHelmChart},
		"a Jsonnet program computing for minutes":   {root: loopingJsonnet},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			req := Request{Root: tc.root(t), Path: "app", AppName: "loop", Limits: Limits{Timeout: 500 * time.Millisecond}}
			start := time.Now()
			err := renderWithin(t, context.Background(), req, 10*time.Second)
			t.Logf("Render returned after %s: %v", time.Since(start).Round(time.Millisecond), err)
			if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "stopped at its deadline of 500ms") {
				t.Errorf("Render() error = %v, want one saying it stopped at its deadline of 500ms", err)
			}
			used := cpuOverWindow(t, time.Second)
			t.Logf("CPU used in the second after: %s", used)
			if used > 250*time.Millisecond {
				t.Errorf("the process used %s of CPU in the second after the render stopped, want it idle", used)
			}
		})
	}
}

// An app deleted, or an HTTP request gone, cancels the render's context:
// the evaluation stops then, not when it would have finished.
func TestRenderStopsWhenItsCallerGivesUp(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(300*time.Millisecond, cancel)
	err := renderWithin(t, ctx, Request{Root: loopingJsonnet(t), Path: "app"}, 10*time.Second)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Render() error = %v, want context.Canceled", err)
	}
	used := cpuOverWindow(t, time.Second)
	t.Logf("CPU used in the second after: %s", used)
	if used > 250*time.Millisecond {
		t.Errorf("the process used %s of CPU in the second after the caller gave up, want it idle", used)
	}
}
