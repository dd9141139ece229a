// Package promtest runs a real Prometheus for tests, scraping an HTTP server
// whose metric value the test sets. The Prometheus server is built from the
// Go module proxy into the test binary cache (testcluster.PrometheusBinary),
// so every machine runs the same version without a system package.
package promtest

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/skiffcd/skiff/internal/testcluster"
)

// Target is an HTTP server exposing gauges in the Prometheus text format.
type Target struct {
	mu     sync.Mutex
	values map[string]float64
	server *httptest.Server
}

// NewTarget starts a Target on 127.0.0.1, stopped when the test ends.
func NewTarget(t testing.TB) *Target {
	t.Helper()
	tg := &Target{values: map[string]float64{}}
	tg.server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		tg.mu.Lock()
		defer tg.mu.Unlock()
		for name, v := range tg.values {
			_, _ = fmt.Fprintf(w, "# TYPE %s gauge\n%s %s\n", name, name, strconv.FormatFloat(v, 'g', -1, 64))
		}
	}))
	t.Cleanup(tg.server.Close)
	return tg
}

// Set sets a gauge.
func (tg *Target) Set(name string, v float64) {
	tg.mu.Lock()
	defer tg.mu.Unlock()
	tg.values[name] = v
}

// Host is the target's host:port.
func (tg *Target) Host() string { return tg.server.Listener.Addr().String() }

// Start runs Prometheus scraping target every second and returns its base
// URL. It is killed when the test ends.
func Start(t testing.TB, target *Target) string {
	t.Helper()
	bin, err := testcluster.PrometheusBinary()
	if err != nil {
		t.Fatalf("prometheus: %v (build it with: hack/cluster-bins.sh)", err)
	}
	dir := t.TempDir()
	config := fmt.Sprintf("global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\nscrape_configs:\n- job_name: test\n  static_configs:\n  - targets: [%q]\n", target.Host())
	configPath := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(configPath, []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	port := freePort(t)
	addr := "127.0.0.1:" + strconv.Itoa(port)
	logFile, err := os.Create(filepath.Join(dir, "prometheus.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin,
		"--config.file="+configPath,
		"--web.listen-address="+addr,
		"--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--query.lookback-delta=5s",
	)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting prometheus: %v", err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-exited
		_ = logFile.Close()
	})
	base := "http://" + addr
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for {
		if ready(ctx, base) {
			return base
		}
		select {
		case <-exited:
			log, _ := os.ReadFile(logFile.Name())
			t.Fatalf("prometheus exited early:\n%s", log)
		case <-ctx.Done():
			t.Fatalf("prometheus did not become ready on %s", addr)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// WaitForValue polls query until it returns a single sample equal to want.
func WaitForValue(t testing.TB, base, query string, want float64) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	var last string
	for time.Now().Before(deadline) {
		got, err := queryOne(base, query)
		if err == nil && got == want {
			return
		}
		last = fmt.Sprintf("%v (err %v)", got, err)
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("query %q never returned %v; last %s", query, want, last)
}

func queryOne(base, query string) (float64, error) {
	resp, err := http.Get(base + "/api/v1/query?query=" + url.QueryEscape(query))
	if err != nil {
		return 0, err
	}
	defer func() { _ = resp.Body.Close() }()
	var body struct {
		Data struct {
			Result []struct {
				Value [2]any `json:"value"`
			} `json:"result"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		return 0, err
	}
	if len(body.Data.Result) != 1 {
		return 0, fmt.Errorf("%d samples", len(body.Data.Result))
	}
	s, _ := body.Data.Result[0].Value[1].(string)
	return strconv.ParseFloat(s, 64)
}

func ready(ctx context.Context, base string) bool {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/-/ready", nil)
	if err != nil {
		return false
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return false
	}
	_ = resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

func freePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = l.Close() }()
	return l.Addr().(*net.TCPAddr).Port
}
