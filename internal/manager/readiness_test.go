package manager

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/skiffcd/skiff/api/v1alpha1"
	"github.com/skiffcd/skiff/internal/clustercache"
	"github.com/skiffcd/skiff/internal/kubeclient"
	"github.com/skiffcd/skiff/internal/testwait"
)

// /readyz must not answer ready before the replica can act: before its
// caches have listed the Applications and the settings, and, on the replica that runs the
// controllers, before the cluster cache has listed the live objects.
func TestReadinessWaitsForTheCachesTheReplicaActsOn(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	mgr := newTestManager(t)
	live, err := clustercache.New(cluster.Config, clustercache.Options{})
	if err != nil {
		t.Fatal(err)
	}
	config, err := addConfigCache(mgr, "argocd")
	if err != nil {
		t.Fatal(err)
	}
	elected := make(chan struct{})
	check := readiness(append([]listing{{mgr.GetCache(), &v1alpha1.Application{}, "the Applications"}}, configListings(config)...), elected, live)
	request := httptest.NewRequest("GET", "/readyz", nil).WithContext(ctx)
	ready := func() error { return check(request) }
	notReady := func(what, want string) {
		t.Helper()
		err := ready()
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("%s: readiness %v, want an error about %q", what, err, want)
		}
	}

	notReady("before the manager's cache started", "Applications")
	if err := readiness(configListings(config), elected, live)(request); err == nil || !strings.Contains(err.Error(), "settings") {
		t.Fatalf("before the settings cache started: readiness %v, want an error about the settings", err)
	}
	go func() { _ = mgr.Start(ctx) }()
	testwait.Eventually(t, "a standby replica to be ready once the Applications are listed", ready)

	close(elected)
	notReady("the elected replica, before its cluster cache is filled", "cluster cache")
	go func() { _ = live.Start(ctx) }()
	testwait.Eventually(t, "the elected replica to be ready once the cluster cache is filled", ready)
}

// The informers startInformers names are listed when their cache starts,
// before anything reads them.
func TestStartInformersListsWithTheCache(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	mgr := newTestManager(t)
	if err := startInformers([]listing{{mgr.GetCache(), &v1alpha1.AppProject{}, "the AppProjects"}}); err != nil {
		t.Fatal(err)
	}
	go func() { _ = mgr.Start(ctx) }()
	if !mgr.GetCache().WaitForCacheSync(ctx) {
		t.Fatal("the cache did not sync")
	}
	inf, err := mgr.GetCache().GetInformer(ctx, &v1alpha1.AppProject{}, cache.BlockUntilSynced(false))
	if err != nil {
		t.Fatal(err)
	}
	if !inf.HasSynced() {
		t.Errorf("the AppProjects' informer had not listed them when the cache was synced: it started on this read")
	}
}

// newTestManager builds a manager with Skiff's scheme and no endpoints.
func newTestManager(t *testing.T) ctrl.Manager {
	t.Helper()
	scheme, err := kubeclient.NewScheme()
	if err != nil {
		t.Fatal(err)
	}
	mgr, err := ctrl.NewManager(cluster.Config, ctrl.Options{Scheme: scheme,
		Metrics: metricsserver.Options{BindAddress: "0"}, HealthProbeBindAddress: "0"})
	if err != nil {
		t.Fatal(err)
	}
	return mgr
}
