// Package browser drives Skiff's web UI in headless Chromium against a real
// control plane (internal/testcluster) and the whole server run in-process
// (internal/manager), as `skiff server` runs it.
package browser

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr/funcr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/skiffcd/skiff/internal/crds"
	"github.com/skiffcd/skiff/internal/kubeclient"
	"github.com/skiffcd/skiff/internal/manager"
	"github.com/skiffcd/skiff/internal/server"
	"github.com/skiffcd/skiff/internal/testcluster"
	"github.com/skiffcd/skiff/internal/testwait"
)

// chromiumPath is Debian's Chromium; $SKIFF_TEST_CHROMIUM names another
// (the test of a missing browser names one that does not exist).
var chromiumPath = cmp.Or(os.Getenv("SKIFF_TEST_CHROMIUM"), "/usr/bin/chromium")

const (
	// installChromium is the command that provides /usr/bin/chromium
	// (Debian's package, as hack/test-prereqs.sh runs it).
	installChromium = "apt-get install -y chromium"
	// argocd is Skiff's own namespace, as in an Argo CD install.
	argocd = "argocd"
)

// env is what every test shares: one cluster and one Skiff server.
var env struct {
	cluster   *testcluster.Cluster
	k8s       client.Client
	url       string // the server, plain HTTP on 127.0.0.1
	password  string // admin's generated password
	artifacts string // screenshots and the server log
}

func TestMain(m *testing.M) {
	os.Exit(runMain(m))
}

func runMain(m *testing.M) int {
	// A missing browser fails the run instead of skipping it, so that a green
	// run never hides the UI tests; `make test` installs Chromium first.
	if _, err := os.Stat(chromiumPath); err != nil {
		fmt.Fprintf(os.Stderr, "browser tests: %s is missing (%v); install it with: %s\n", chromiumPath, err, installChromium)
		return 1
	}
	var err error
	if env.artifacts, err = artifactsDir(); err != nil {
		fmt.Fprintf(os.Stderr, "browser tests: %v\n", err)
		return 1
	}
	start := time.Now()
	c, err := testcluster.Start(context.Background(), testcluster.Options{})
	if err != nil {
		fmt.Fprintf(os.Stderr, "testcluster: %v\n", err)
		return 1
	}
	defer c.Stop()
	env.cluster = c
	fmt.Fprintf(os.Stderr, "testcluster: control plane up in %s\n", time.Since(start).Round(100*time.Millisecond))
	ctx, cancel := context.WithCancel(context.Background())
	stopped, err := startServer(ctx)
	if err != nil {
		cancel()
		fmt.Fprintf(os.Stderr, "skiff server: %v\n", err)
		return 1
	}
	code := m.Run()
	cancel()
	select {
	case <-stopped:
	case <-time.After(20 * time.Second):
		fmt.Fprintln(os.Stderr, "skiff server did not stop within 20s")
	}
	return code
}

// artifactsDir is $SKIFF_TEST_ARTIFACTS, or bin/test-artifacts/browser in the repository.
func artifactsDir() (string, error) {
	dir := os.Getenv("SKIFF_TEST_ARTIFACTS")
	if dir == "" {
		wd, err := os.Getwd()
		if err != nil {
			return "", err
		}
		root := wd
		for i := 0; i < 10; i++ { // up to go.mod, a few levels at most
			if _, err := os.Stat(filepath.Join(root, "go.mod")); err == nil {
				break
			}
			root = filepath.Dir(root)
		}
		dir = filepath.Join(root, "bin", "test-artifacts", "browser")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	// Screenshots of an earlier run would pass for this one's.
	old, err := filepath.Glob(filepath.Join(dir, "Test*.png"))
	if err != nil {
		return "", err
	}
	for _, f := range old {
		if err := os.Remove(f); err != nil {
			return "", err
		}
	}
	return dir, nil
}

// startServer runs the whole server (controllers and API) until ctx ends,
// logging to server.log among the artifacts, and waits for its admin password.
func startServer(ctx context.Context) (<-chan struct{}, error) {
	logFile, err := os.Create(filepath.Join(env.artifacts, "server.log"))
	if err != nil {
		return nil, err
	}
	ctrllog.SetLogger(funcr.New(func(prefix, args string) {
		fmt.Fprintf(logFile, "%s %s %s\n", time.Now().Format("15:04:05.000"), prefix, args)
	}, funcr.Options{Verbosity: 0}))
	setup, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	if err := crds.Install(setup, env.cluster.Config, time.Minute); err != nil {
		return nil, err
	}
	scheme, err := kubeclient.NewScheme()
	if err != nil {
		return nil, err
	}
	if env.k8s, err = client.New(env.cluster.Config, client.Options{Scheme: scheme}); err != nil {
		return nil, err
	}
	if err := env.k8s.Create(setup, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: argocd}}); err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	env.url = "http://" + ln.Addr().String()
	cacheDir, err := os.MkdirTemp("", "skiff-browser-cache-")
	if err != nil {
		return nil, err
	}
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		defer os.RemoveAll(cacheDir)
		defer logFile.Close()
		err := manager.Run(ctx, env.cluster.Config, manager.Options{
			Namespace:     argocd,
			MetricsAddr:   "0",
			HealthAddr:    "0",
			CacheDir:      cacheDir,
			RefreshPeriod: 10 * time.Second,
			API:           server.Options{Addr: ln.Addr().String(), Listener: ln, Insecure: true},
		})
		if err != nil {
			fmt.Fprintf(os.Stderr, "skiff server: %v\n", err)
		}
	}()
	env.password, err = initialPassword(setup)
	return stopped, err
}

// initialPassword reads argocd-initial-admin-secret once the server wrote it.
func initialPassword(ctx context.Context) (string, error) {
	var password string
	err := testwait.Until(ctx, "the initial admin password", func() error {
		var secret corev1.Secret
		if err := env.k8s.Get(ctx, types.NamespacedName{Namespace: argocd, Name: "argocd-initial-admin-secret"}, &secret); err != nil {
			return err
		}
		password = string(secret.Data["password"])
		if password == "" {
			return errors.New("argocd-initial-admin-secret has no password")
		}
		// argocd-secret is written after it: wait until the password logs in.
		return apiLogin(ctx, "admin", password)
	}, testwait.Timeout(60*time.Second), testwait.Interval(200*time.Millisecond))
	return password, err
}

// apiLogin logs in through the API, to check credentials work.
func apiLogin(ctx context.Context, user, password string) error {
	body, _ := json.Marshal(map[string]string{"username": user, "password": password})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, env.url+"/api/v1/session", bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("login %s: %s", user, resp.Status)
	}
	return nil
}

// screenshotName makes a file name from the test's name and a stage.
func screenshotName(t *testing.T, stage string) string {
	name := strings.NewReplacer("/", "-", " ", "-").Replace(t.Name() + "-" + stage)
	return filepath.Join(env.artifacts, name+".png")
}
