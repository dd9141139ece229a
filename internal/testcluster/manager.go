package testcluster

import (
	"context"
	"os"
	"sync"
	"testing"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/yaml"

	"github.com/skiffcd/skiff/internal/kubeclient"
)

var discardLogs sync.Once

// StartManager runs a controller-runtime manager against the cluster until
// the test ends, with the Kubernetes and argoproj.io kinds, no metrics or
// probe listeners, and controller names that may repeat across tests.
// setup registers the controllers under test. It returns a direct
// (uncached) client for the test's own reads and writes. It uses
// pkg/manager, not controller-runtime's root package, which registers a
// global -kubeconfig flag that hack/devcluster (importing this package)
// defines too.
func (c *Cluster) StartManager(t testing.TB, setup func(manager.Manager) error) client.Client {
	t.Helper()
	// The tests read no controller logs; without a logger controller-runtime
	// prints a stack trace instead.
	discardLogs.Do(func() { ctrllog.SetLogger(logr.Discard()) })
	mgr, err := manager.New(c.Config, manager.Options{
		Scheme:                 Scheme(t),
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Controller:             config.Controller{SkipNameValidation: ptr.To(true)},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := setup(mgr); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	t.Cleanup(func() { cancel(); <-done })
	go func() {
		defer close(done)
		if err := mgr.Start(ctx); err != nil {
			t.Errorf("manager: %v", err)
		}
	}()
	return c.Client(t)
}

// ReadYAML decodes the YAML file at path strictly into obj and, when ns is
// not empty, puts it in ns: the fixtures tests create.
func ReadYAML(t testing.TB, path string, obj client.Object, ns string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.UnmarshalStrict(data, obj); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if ns != "" {
		obj.SetNamespace(ns)
	}
}

// Scheme is kubeclient.NewScheme for tests.
func Scheme(t testing.TB) *runtime.Scheme {
	t.Helper()
	scheme, err := kubeclient.NewScheme()
	if err != nil {
		t.Fatal(err)
	}
	return scheme
}

// Client returns an uncached client of the cluster with Scheme's kinds.
func (c *Cluster) Client(t testing.TB) client.Client {
	t.Helper()
	k8s, err := client.New(c.Config, client.Options{Scheme: Scheme(t)})
	if err != nil {
		t.Fatal(err)
	}
	return k8s
}
