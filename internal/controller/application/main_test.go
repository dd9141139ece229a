package application

import (
	"context"
	"os"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/skiffcd/skiff/api/v1alpha1"
	"github.com/skiffcd/skiff/internal/argocdcm"
	"github.com/skiffcd/skiff/internal/clustercache"
	"github.com/skiffcd/skiff/internal/clusters"
	"github.com/skiffcd/skiff/internal/kubeclient"
	"github.com/skiffcd/skiff/internal/reposerver"
	"github.com/skiffcd/skiff/internal/syncengine"
	"github.com/skiffcd/skiff/internal/testcluster"
)

var cluster *testcluster.Cluster

func TestMain(m *testing.M) {
	os.Exit(testcluster.RunMainWithCRDs(m, func(c *testcluster.Cluster) { cluster = c }))
}

// startController runs the Application controller for Applications in ns,
// comparing every 3 s, until the test ends, and returns a client.
func startController(t *testing.T, ns string) client.Client {
	t.Helper()
	c, _ := startReconciler(t, ns, 3*time.Second)
	return c
}

// startReconciler runs the Application controller for Applications in ns
// with the given refresh period, changed by configure, until the test ends,
// and returns a client and the controller.
func startReconciler(t *testing.T, ns string, period time.Duration, configure ...func(*Reconciler)) (client.Client, *Reconciler) {
	t.Helper()
	c, r, _ := startStoppableReconciler(t, ns, period, configure...)
	return c, r
}

// startStoppableReconciler is startReconciler with a stop function that
// ends the controller (its manager and cluster cache) and waits for it: a
// restart is a stop and a new start.
func startStoppableReconciler(t *testing.T, ns string, period time.Duration, configure ...func(*Reconciler)) (client.Client, *Reconciler, func()) {
	t.Helper()
	return startReconcilerWithSettings(t, ns, period, nil, configure...)
}

// startReconcilerWithSettings is startStoppableReconciler following
// settings (argocd-cm) as skiff server does: its health scripts judge in
// the cache, the comparisons and the sync engine's waves.
func startReconcilerWithSettings(t *testing.T, ns string, period time.Duration, settings *argocdcm.Source, configure ...func(*Reconciler)) (client.Client, *Reconciler, func()) {
	t.Helper()
	judge := settings.HealthJudge()
	scheme, err := kubeclient.NewScheme()
	if err != nil {
		t.Fatal(err)
	}
	// Applications are read and written as skiff server does (see
	// manager.Run): through kubeclient's client of their own.
	applications, err := kubeclient.NewApplications(cluster.Config, scheme)
	if err != nil {
		t.Fatal(err)
	}
	opts := ctrl.Options{
		Scheme:                 scheme,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Controller:             config.Controller{SkipNameValidation: ptr.To(true)},
	}
	applications.ConfigureManager(&opts)
	mgr, err := ctrl.NewManager(cluster.Config, opts)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	live, err := clustercache.New(cluster.Config, clustercache.Options{Health: judge.StatusText, Excluded: settings.ExcludedIn(clusters.InClusterServer),
		Fingerprint: UpdateFingerprint(settings)})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	stop := func() { cancel(); <-done }
	t.Cleanup(stop)
	go func() {
		_ = live.Start(ctx)
	}()
	direct, err := client.New(cluster.Config, client.Options{Scheme: scheme, Mapper: mgr.GetRESTMapper()})
	if err != nil {
		t.Fatal(err)
	}
	repo, err := reposerver.NewInDir(dir, reposerver.Options{})
	if err != nil {
		t.Fatal(err)
	}
	r := &Reconciler{
		Client:    applications.Writes(mgr.GetClient()),
		APIReader: mgr.GetAPIReader(),
		Namespace: ns,
		Repo:      repo,
		Cache:     live,
		Engine: &syncengine.Engine{Client: direct, Poll: 100 * time.Millisecond, WaveTimeout: time.Minute,
			Health: func(u *unstructured.Unstructured) (v1alpha1.HealthStatusCode, string) {
				res := judge.Assess(u)
				return res.Status, res.Message
			}, Awaited: judge.Awaited},
		RefreshPeriod: period,
		Settings:      settings,
	}
	for _, f := range configure {
		f(r)
	}
	if err := r.SetupWithManager(mgr); err != nil {
		t.Fatal(err)
	}
	go func() {
		defer close(done)
		if err := mgr.Start(ctx); err != nil {
			t.Errorf("manager: %v", err)
		}
	}()
	return direct, r, stop
}
