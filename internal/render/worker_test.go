package render

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/skiffcd/skiff/api/v1alpha1"
	"github.com/skiffcd/skiff/internal/testwait"
)

// A template that builds a gigabyte string is stopped at the worker's
// memory limit, and the next render gets a fresh worker.
func TestWorkerOverItsMemoryLimitIsKilled(t *testing.T) {
	pool := NewPool(PoolOptions{Size: 1, MaxMemoryBytes: 200 << 20})
	root := t.TempDir()
	writeTree(t, root, map[string]string{
		"big/Chart.yaml": "apiVersion: v2\nname: big\nversion: 0.1.0\n",
		"big/templates/cm.yaml": `{{- $s := "0123456789abcdef" }}{{- range until 26 }}{{- $s = printf "%s%s" $s $s }}{{- end }}
apiVersion: v1
kind: ConfigMap
metadata:
  name: big
data:
  size: "{{ len $s }}"
`,
		"small/Chart.yaml":        "apiVersion: v2\nname: small\nversion: 0.1.0\n",
		"small/templates/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: small\n",
	})
	_, err := Render(context.Background(), Request{Root: root, Path: "big", Workers: pool})
	if err == nil || !strings.Contains(err.Error(), "render used more than the limit of 200 MiB of memory") {
		t.Fatalf("Render() error = %v, want the memory limit", err)
	}
	if st := pool.Stats(); st.Killed != 1 {
		t.Errorf("pool stats %+v, want one worker killed", st)
	}
	out, err := Render(context.Background(), Request{Root: root, Path: "small", Workers: pool})
	if err != nil || len(out) != 1 {
		t.Fatalf("the render after the kill: %d objects, %v; want 1 object", len(out), err)
	}
	if st := pool.Stats(); st.Started != 2 {
		t.Errorf("pool stats %+v, want a second worker started", st)
	}
}

// Workers live across renders: starting a process per render would cost
// tens of milliseconds each.
func TestWorkersAreReusedUntilKilled(t *testing.T) {
	pool := NewPool(PoolOptions{Size: 2})
	root := t.TempDir()
	writeTree(t, root, map[string]string{
		"chart/Chart.yaml":        "apiVersion: v2\nname: chart\nversion: 0.1.0\n",
		"chart/templates/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}\n",
		"loop/Chart.yaml":         "apiVersion: v2\nname: loop\nversion: 0.1.0\n",
		"loop/templates/cm.yaml":  helmLoopTemplate,
	})
	render := func(path string, timeout time.Duration) error {
		_, err := Render(context.Background(), Request{Root: root, Path: path, AppName: "a", Workers: pool, Limits: Limits{Timeout: timeout}})
		return err
	}
	for range 3 {
		if err := render("chart", 0); err != nil {
			t.Fatal(err)
		}
	}
	if st := pool.Stats(); st.Started != 1 || st.Jobs != 3 || st.Idle != 1 {
		t.Fatalf("after three renders: %+v, want one worker started for three jobs, idle", st)
	}
	if err := render("loop", 200*time.Millisecond); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("looping render: %v, want its deadline", err)
	}
	if err := render("chart", 0); err != nil {
		t.Fatal(err)
	}
	if st := pool.Stats(); st.Started != 2 || st.Killed != 1 {
		t.Errorf("after a render killed at its deadline: %+v, want it killed and one more worker started", st)
	}
}

// The output limit holds on the stream: a frame that would pass it is
// refused from its header, before its bytes are read.
func TestWorkerOutputOverTheLimitIsRefusedBeforeItIsRead(t *testing.T) {
	var stream bytes.Buffer
	if err := writeFrame(&stream, frameOutput, encodeOutput(jobOutput{Name: "a.yaml", Text: []byte("small")})); err != nil {
		t.Fatal(err)
	}
	// A header announcing a gigabyte, followed by a body that must not be read.
	big := []byte{frameOutput, 0x40, 0, 0, 0}
	body := &countingReader{r: strings.NewReader(strings.Repeat("x", 4096))}
	_, err := readResults(io.MultiReader(&stream, bytes.NewReader(big), body), 1<<20)
	if !errors.Is(err, errOutputLimit) {
		t.Fatalf("readResults() error = %v, want the output limit", err)
	}
	if body.n != 0 {
		t.Errorf("%d bytes of the oversized frame were read", body.n)
	}
}

type countingReader struct {
	r io.Reader
	n int
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += n
	return n, err
}

// A job's own failure (here a template error) leaves its worker usable.
func TestWorkerSurvivesItsJobsErrors(t *testing.T) {
	pool := NewPool(PoolOptions{Size: 1})
	root := t.TempDir()
	writeTree(t, root, map[string]string{
		"Chart.yaml":          "apiVersion: v2\nname: bad\nversion: 0.1.0\n",
		"templates/bad.yaml":  "{{ fail \"no thanks\" }}\n",
		"values.yaml":         "x: 1\n",
		"templates/_help.tpl": "",
	})
	for range 2 {
		_, err := Render(context.Background(), Request{Root: root, Source: v1alpha1.ApplicationSource{Helm: &v1alpha1.ApplicationSourceHelm{}}, Workers: pool})
		if err == nil || !strings.Contains(err.Error(), "no thanks") {
			t.Fatalf("Render() error = %v, want the template's failure", err)
		}
	}
	if st := pool.Stats(); st.Started != 1 || st.Killed != 0 {
		t.Errorf("pool stats %+v, want one worker, never killed", st)
	}
}

// A server killed outright (OOM, SIGKILL) takes its workers down with it,
// even one in the middle of a render that would loop for minutes.
func TestWorkerExitsWithItsParent(t *testing.T) {
	if os.Getenv("SKIFF_TEST_RENDER_PARENT") != "" {
		// The parent: start a looping render and wait to be killed.
		root := loopingHelmChart(t)
		go func() {
			_, _ = Render(context.Background(), Request{Root: root, Path: "app", Limits: Limits{Timeout: time.Hour}})
		}()
		time.Sleep(time.Hour)
		return
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	parent := exec.Command(exe, "-test.run=^TestWorkerExitsWithItsParent$")
	parent.Env = append(os.Environ(), "SKIFF_TEST_RENDER_PARENT=1")
	if err := parent.Start(); err != nil {
		t.Fatal(err)
	}
	// The worker is in the middle of the render once it has used more CPU
	// than starting takes: an idle worker uses none.
	var workers []process
	err = testwait.Until(context.Background(), "the parent's worker to render", func() error {
		workers = children(parent.Process.Pid)
		var cpu time.Duration
		for _, w := range workers {
			cpu += w.cpu
		}
		if cpu < 300*time.Millisecond {
			return fmt.Errorf("%d workers used %s of CPU", len(workers), cpu)
		}
		return nil
	}, testwait.Timeout(30*time.Second), testwait.Interval(20*time.Millisecond))
	if err != nil {
		_ = parent.Process.Kill()
		t.Fatal(err)
	}
	if err := parent.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = parent.Wait()
	err = testwait.Until(context.Background(), "the dead parent's workers to exit", func() error {
		// Orphans are adopted by init (or a subreaper): look them up by pid.
		alive := 0
		for _, w := range workers {
			if data, err := os.ReadFile("/proc/" + strconv.Itoa(w.pid) + "/stat"); err == nil && !strings.Contains(string(data), ") Z ") {
				alive++
			}
		}
		if alive > 0 {
			return fmt.Errorf("%d of %d still run", alive, len(workers))
		}
		return nil
	}, testwait.Timeout(5*time.Second), testwait.Interval(50*time.Millisecond))
	if err != nil {
		for _, w := range workers {
			_ = syscall.Kill(w.pid, syscall.SIGKILL)
		}
		t.Fatal(err)
	}
}

// A worker that died while idle (the kernel's OOM killer, an operator's
// kill) is not handed a job: the next render starts a fresh one.
func TestWorkerThatDiedIdleIsReplaced(t *testing.T) {
	pool := NewPool(PoolOptions{Size: 1})
	root := t.TempDir()
	writeTree(t, root, map[string]string{
		"Chart.yaml":        "apiVersion: v2\nname: c\nversion: 0.1.0\n",
		"templates/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\n",
	})
	render := func() error {
		_, err := Render(context.Background(), Request{Root: root, AppName: "a", Workers: pool})
		return err
	}
	if err := render(); err != nil {
		t.Fatal(err)
	}
	pool.mu.Lock()
	idle := pool.idle[0]
	pool.mu.Unlock()
	if err := idle.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-idle.exited
	if err := render(); err != nil {
		t.Fatalf("the render after the idle worker died: %v", err)
	}
	if st := pool.Stats(); st.Started != 2 {
		t.Errorf("pool stats %+v, want a second worker started", st)
	}
}
