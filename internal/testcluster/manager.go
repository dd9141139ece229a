package testcluster

import (
	"context"
	"os"
	"sync"
	"testing"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/yaml"

	"github.com/skiffcd/skiff/api/v1alpha1"
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
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	if err := v1alpha1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	mgr, err := manager.New(c.Config, manager.Options{
		Scheme:                 scheme,
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
	direct, err := client.New(c.Config, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	return direct
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
