package main

import (
	"context"
	"errors"
	"net"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/skiffcd/skiff/internal/appsetops"
	"github.com/skiffcd/skiff/internal/cli/sessioncli"
	"github.com/skiffcd/skiff/internal/clusters"
	"github.com/skiffcd/skiff/internal/reposerver"
	"github.com/skiffcd/skiff/internal/server"
)

// `skiff login`, `skiff account update-password` and `skiff logout`
// against a real API server: the session is saved in the config file, the
// password change logs in again, logout forgets the token.
func TestLoginAccountAndLogout(t *testing.T) {
	srv := startAPIServer(t, cluster.Namespace(t))
	addr, password := srv.addr, srv.password
	config := filepath.Join(t.TempDir(), "config")

	if _, err := runSkiff("login", addr, "--password", "wrong", "--insecure-skip-tls-verify", "--config", config); err == nil ||
		!strings.Contains(err.Error(), "Invalid username or password") {
		t.Fatalf("login with a wrong password: %v", err)
	}
	if _, err := runSkiff("login", addr, "--config", config); err == nil || !strings.Contains(err.Error(), "give --password") {
		t.Fatalf("login without a password off a terminal: %v", err)
	}
	out, err := runSkiff("login", addr, "--password", password, "--insecure-skip-tls-verify", "--config", config)
	if err != nil || !strings.Contains(out, "'admin' logged in successfully") {
		t.Fatalf("login: %v\n%s", err, out)
	}
	cfg, err := sessioncli.LoadConfig(config)
	if err != nil || cfg.Token == "" || cfg.Server != addr || !cfg.Insecure {
		t.Fatalf("saved config %+v (%v)", cfg, err)
	}
	out, err = runSkiff("account", "update-password", "--current-password", password, "--new-password", "a-new-admin-password", "--config", config)
	if err != nil || !strings.Contains(out, "Password updated") {
		t.Fatalf("update-password: %v\n%s", err, out)
	}
	if _, err := runSkiff("login", addr, "--password", "a-new-admin-password", "--insecure-skip-tls-verify", "--config", config); err != nil {
		t.Fatalf("login with the new password: %v", err)
	}
	out, err = runSkiff("logout", "--config", config)
	if err != nil || !strings.Contains(out, "logged out from '"+addr+"'") {
		t.Fatalf("logout: %v\n%s", err, out)
	}
	if cfg, _ := sessioncli.LoadConfig(config); cfg.Token != "" {
		t.Error("the token is kept after logout")
	}
	if _, err := runSkiff("logout", "--config", config); err == nil || !strings.Contains(err.Error(), "not logged in") {
		t.Errorf("a second logout: %v, want not logged in", err)
	}
}

// apiServer is a running API server of a test.
type apiServer struct {
	addr, password string
	// streams counts the event streams' informer requests.
	streams *atomic.Int64
}

// countingInformers counts the informers the event streams ask for.
type countingInformers struct {
	cache.Informers
	n *atomic.Int64
}

func (c countingInformers) GetInformer(ctx context.Context, obj client.Object, opts ...cache.InformerGetOption) (cache.Informer, error) {
	c.n.Add(1)
	return c.Informers.GetInformer(ctx, obj, opts...)
}

// startAPIServer runs the real API server on 127.0.0.1 for the
// configuration and Applications of ns until the test ends, rendering
// with a repo server of its own and streaming from informers of ns, and
// returns its address and the initial admin password.
func startAPIServer(t *testing.T, ns string) apiServer {
	t.Helper()
	c := kube(t)
	dyn, err := dynamic.NewForConfig(cluster.Config)
	if err != nil {
		t.Fatal(err)
	}
	informers, err := cache.New(cluster.Config, cache.Options{Scheme: c.Scheme(), DefaultNamespaces: map[string]cache.Config{ns: {}}})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	repo, err := reposerver.NewInDir(t.TempDir(), reposerver.Options{})
	if err != nil {
		t.Fatal(err)
	}
	streams := &atomic.Int64{}
	s := &server.Server{
		Client: c, Namespace: ns,
		Repo: repo, Dynamic: dyn, Mapper: c.RESTMapper(),
		Informers: countingInformers{Informers: informers, n: streams},
	}
	s.GenerateAppSet = appsetops.Live{Repo: repo, Clusters: clusters.NewStatic(), Reader: c, Dynamic: dyn, Namespace: ns}.Generate
	s.Options.Listener = ln
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 2)
	go func() { done <- s.Start(ctx) }()
	go func() { done <- informers.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		timeout := time.After(10 * time.Second)
		for range 2 {
			select {
			case <-done:
			case <-timeout:
				t.Error("the API server or its informers did not stop within 10 s")
				return
			}
		}
	})
	var password string
	waitFor(t, "the initial admin password", func() error {
		var secret corev1.Secret
		if err := c.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: server.InitialAdminSecretName}, &secret); err != nil {
			return err
		}
		if password = string(secret.Data["password"]); password == "" {
			return errors.New("the Secret has no password yet")
		}
		return nil
	})
	return apiServer{addr: ln.Addr().String(), password: password, streams: streams}
}
