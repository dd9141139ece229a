package clusters

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/skiffcd/skiff/api/v1alpha1"
	"github.com/skiffcd/skiff/internal/testwait"
)

// startRegistry runs a Secrets registry over a cache of a new namespace,
// as skiff server does over its settings cache.
func startRegistry(t *testing.T) (*Secrets, client.Client, string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	c, err := client.New(cluster.Config, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "clusters-"}}
	if err := c.Create(ctx, ns); err != nil {
		t.Fatal(err)
	}
	settings, err := cache.New(cluster.Config, cache.Options{Scheme: scheme.Scheme, DefaultNamespaces: map[string]cache.Config{ns.Name: {}}})
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = settings.Start(ctx) }()
	reg := NewSecrets(settings, settings, ns.Name)
	done := make(chan error, 1)
	go func() { done <- reg.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("registry: %v", err)
			}
		case <-time.After(10 * time.Second):
			t.Error("the registry did not stop within 10s of its context")
		}
	})
	return reg, c, ns.Name
}

func TestSecretsFollowsTheClusterSecrets(t *testing.T) {
	reg, c, ns := startRegistry(t)
	ctx := context.Background()
	var changes atomic.Int32
	reg.Subscribe(func() { changes.Add(1) })
	testwait.Eventually(t, "the registry to read the Secrets", func() bool { _, ok := reg.Snapshot(); return ok })
	names := func() string {
		var out []string
		for _, c := range reg.List() {
			out = append(out, c.Name+"="+c.Server)
		}
		return fmt.Sprint(out)
	}
	if got := names(); got != "[in-cluster=https://kubernetes.default.svc]" {
		t.Fatalf("clusters with no Secrets: %s", got)
	}

	prod := clusterSecret("cluster-prod", map[string]string{"name": "prod", "server": "https://prod:6443", "config": `{"bearerToken":"t"}`})
	prod.Namespace = ns
	if err := c.Create(ctx, prod); err != nil {
		t.Fatal(err)
	}
	testwait.Eventually(t, "a new Secret to resolve", func() error {
		_, err := reg.Resolve(v1alpha1.ApplicationDestination{Name: "prod"})
		return err
	})
	if changes.Load() < 2 {
		t.Errorf("subscribers were told %d times, want once at the first read and once for the new Secret", changes.Load())
	}

	prod.Data["server"] = []byte("https://prod-2:6443")
	if err := c.Update(ctx, prod); err != nil {
		t.Fatal(err)
	}
	testwait.Eventually(t, "a changed server to take effect", func() error {
		got, err := reg.Resolve(v1alpha1.ApplicationDestination{Name: "prod"})
		if err != nil || got.Server != "https://prod-2:6443" {
			return fmt.Errorf("prod is %v (%v)", got.Server, err)
		}
		return nil
	})

	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "argocd-cm", Namespace: ns}, Data: map[string]string{"cluster.inClusterEnabled": "false"}}
	if err := c.Create(ctx, cm); err != nil {
		t.Fatal(err)
	}
	testwait.Eventually(t, "argocd-cm to turn the in-cluster destination off", func() bool {
		_, err := reg.Resolve(v1alpha1.ApplicationDestination{Server: InClusterServer})
		return errors.Is(err, ErrNotFound)
	})

	if err := c.Delete(ctx, prod); err != nil {
		t.Fatal(err)
	}
	testwait.Eventually(t, "a deleted Secret to be forgotten", func() error {
		if got := names(); got != "[]" {
			return fmt.Errorf("clusters %s", got)
		}
		return nil
	})
}
