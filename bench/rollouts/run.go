package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/skiffcd/skiff/api/v1alpha1"
	"github.com/skiffcd/skiff/bench/internal/benchkit"
	"github.com/skiffcd/skiff/internal/crds"
	"github.com/skiffcd/skiff/internal/testcluster"
)

const (
	// argocdNS is skiff server's own namespace (--namespace).
	argocdNS  = "argocd"
	inFlight  = 20
	pollEvery = 500 * time.Millisecond
	// experimentCRD is the Experiment kind Argo Rollouts' controller needs
	// to start; skiff does not serve it. The path is from the repository
	// root, where the bench runs.
	experimentCRD = "internal/controller/rollout/testdata/argo-rollouts-experiment-crd.yml"
)

// env is the one control plane every run shares.
type env struct {
	cluster      *testcluster.Cluster
	c            client.WithWatch
	apiserverPID int
	// metrics reads kube-apiserver's /metrics.
	metrics     *http.Client
	skiffBin    string
	logDir, tmp string
}

// startEnv starts the control plane and installs skiff's argoproj.io CRDs
// and the Experiment CRD, before either controller runs.
func startEnv(ctx context.Context, skiffBin, logDir, tmp string) (*env, error) {
	cluster, err := testcluster.Start(ctx, testcluster.Options{Profiling: *profileDir != ""})
	if err != nil {
		return nil, err
	}
	e := &env{cluster: cluster, skiffBin: skiffBin, logDir: logDir, tmp: tmp, apiserverPID: cluster.PIDs()["kube-apiserver"]}
	if err := e.setup(ctx); err != nil {
		cluster.Stop()
		return nil, err
	}
	return e, nil
}

func (e *env) setup(ctx context.Context) error {
	var err error
	if e.c, err = benchkit.NewClient(e.cluster.Config); err != nil {
		return err
	}
	if e.metrics, err = rest.HTTPClientFor(e.cluster.Config); err != nil {
		return err
	}
	e.metrics.Timeout = 10 * time.Second
	if err := crds.Install(ctx, e.cluster.Config, time.Minute); err != nil {
		return fmt.Errorf("installing skiff's CRDs: %w", err)
	}
	data, err := os.ReadFile(experimentCRD)
	if err != nil {
		return fmt.Errorf("the Experiment CRD (run the bench from the repository root): %w", err)
	}
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := yaml.Unmarshal(data, crd); err != nil {
		return fmt.Errorf("parsing %s: %w", experimentCRD, err)
	}
	scheme := runtime.NewScheme()
	if err := apiextensionsv1.AddToScheme(scheme); err != nil {
		return err
	}
	crdClient, err := client.New(e.cluster.Config, client.Options{Scheme: scheme})
	if err != nil {
		return err
	}
	if err := crdClient.Create(ctx, crd); err != nil {
		return fmt.Errorf("creating the Experiment CRD: %w", err)
	}
	if err := crds.WaitServed(ctx, e.cluster.Config, []*apiextensionsv1.CustomResourceDefinition{crd}, time.Minute); err != nil {
		return err
	}
	return e.c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: argocdNS}})
}

// row is one run's figures.
type row struct {
	name string
	// create and update run from the first write until all N are Healthy
	// (the floor: rolled out).
	create, update time.Duration
	// cpu is the controller's CPU-s in create, update and idle.
	cpu [3]float64
	// apiCPU is kube-apiserver's CPU-s in create and update.
	apiCPU [2]float64
	rss    float64
	// requests are the increases of apiserver_request_total in create and
	// update, by verb and resource, from every client.
	requests [2]map[string]float64
}

// workload is what a run writes and waits for.
type workload struct {
	what    string
	newList func() client.ObjectList
	// object is the i-th object to create; extra are created before it,
	// untimed (blue-green's Services).
	object func(i int) (client.Object, error)
	extra  func(i int) []*corev1.Service
	done   func(client.Object) bool
}

func floorWorkload() workload {
	return workload{
		what:    "Deployments rolled out",
		newList: func() client.ObjectList { return &appsv1.DeploymentList{} },
		object:  func(i int) (client.Object, error) { return deployment(i) },
		extra:   func(int) []*corev1.Service { return nil },
		done:    func(o client.Object) bool { return deploymentDone(o.(*appsv1.Deployment)) },
	}
}

func rolloutWorkload(strategy string) workload {
	return workload{
		what:    "Rollouts Healthy",
		newList: func() client.ObjectList { return &v1alpha1.RolloutList{} },
		object:  func(i int) (client.Object, error) { return rolloutObject(strategy, i) },
		extra:   func(i int) []*corev1.Service { return services(strategy, i) },
		done:    func(o client.Object) bool { return rolloutDone(o.(*v1alpha1.Rollout)) },
	}
}

// runOne runs side (floor, argo or skiff) in a fresh namespace: create N,
// wait until all are done, update all images, wait again, idle; then it
// stops the controller and deletes the namespace, so that the next run's
// controller finds nothing of this one.
func (e *env) runOne(ctx context.Context, side, strategy string) (r row, err error) {
	r.name = side
	ns := "bench-" + side + "-" + strategy
	w := rolloutWorkload(strategy)
	if side == "floor" {
		ns, w = "bench-floor", floorWorkload()
	}
	if err := e.c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		return r, err
	}
	defer func() {
		if gone := e.deleteNamespace(ctx, ns); err == nil {
			err = gone
		}
	}()
	objs := make([]client.Object, *n)
	for i := range *n {
		if objs[i], err = w.object(i); err != nil {
			return r, err
		}
		objs[i].SetNamespace(ns)
	}
	err = benchkit.ForEach(*n, inFlight, func(i int) error {
		for _, svc := range w.extra(i) {
			svc.Namespace = ns
			if err := e.c.Create(ctx, svc); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return r, err
	}

	ctl, err := e.startController(ctx, side, ns)
	if err != nil {
		return r, err
	}
	defer ctl.stop()
	defer func() {
		if err != nil {
			err = fmt.Errorf("%w\n%s's log %s, last lines:\n%s", err, ctl.name, ctl.log, benchkit.Tail(ctl.log, 20))
		}
	}()
	proc := benchkit.NewProcWatch(ctl.pid)
	defer proc.Stop()
	api := benchkit.NewProcWatch(e.apiserverPID)
	defer api.Stop()
	proc.Phase()
	api.Phase()
	requests0 := e.requests(ctx)

	profiled := ctl.startProfile(fmt.Sprintf("skiff-create-%s-%d.pprof", strategy, *n))
	start := time.Now()
	if err := benchkit.ForEach(*n, inFlight, func(i int) error { return e.c.Create(ctx, objs[i]) }); err != nil {
		return r, fmt.Errorf("creating: %w", err)
	}
	if r.create, err = e.waitAll(ctx, w, ns, ctl, start); err != nil {
		return r, fmt.Errorf("after create: %w", err)
	}
	r.cpu[0], _ = proc.Phase()
	r.apiCPU[0], _ = api.Phase()
	requests1 := e.requests(ctx)
	r.requests[0] = benchkit.Deltas(requests0, requests1)
	if profiled() {
		// The profile outlasted the phase: what ran while it finished
		// counts in neither phase.
		proc.Phase()
		api.Phase()
		requests1 = e.requests(ctx)
	}

	profiled = ctl.startProfile(fmt.Sprintf("skiff-update-%s-%d.pprof", strategy, *n))
	fmt.Printf("%s: create → all %s in %s; %s %.2f CPU-s, kube-apiserver %.2f CPU-s\n", side, w.what, secs(r.create), ctl.name, r.cpu[0], r.apiCPU[0])

	start = time.Now()
	err = benchkit.ForEach(*n, inFlight, func(i int) error {
		return e.c.Patch(ctx, objs[i], client.RawPatch(types.JSONPatchType, imagePatch))
	})
	if err != nil {
		return r, fmt.Errorf("updating the image: %w", err)
	}
	if r.update, err = e.waitAll(ctx, w, ns, ctl, start); err != nil {
		return r, fmt.Errorf("after update: %w", err)
	}
	r.cpu[1], _ = proc.Phase()
	r.apiCPU[1], _ = api.Phase()
	r.requests[1] = benchkit.Deltas(requests1, e.requests(ctx))
	if profiled() {
		proc.Phase()
		api.Phase()
	}
	ctl.saveHeapProfile(fmt.Sprintf("skiff-heap-%s-%d.pprof", strategy, *n))
	fmt.Printf("%s: update → all %s in %s; %s %.2f CPU-s, kube-apiserver %.2f CPU-s\n", side, w.what, secs(r.update), ctl.name, r.cpu[1], r.apiCPU[1])

	select {
	case <-time.After(*idle):
	case <-ctx.Done():
		return r, ctx.Err()
	}
	if err := ctl.alive(); err != nil {
		return r, err
	}
	r.cpu[2], _ = proc.Phase()
	r.rss = proc.HWM()
	fmt.Printf("%s: idle %s: %.2f CPU-s; peak RSS %.1f MiB\n", side, *idle, r.cpu[2], r.rss)
	return r, nil
}

func (e *env) startController(ctx context.Context, side, ns string) (*controller, error) {
	switch side {
	case "floor":
		return controllerManager(e.cluster)
	case "argo":
		return startArgoRollouts(ctx, e.cluster, ns, e.logDir)
	case "skiff":
		return startSkiff(ctx, e.cluster, e.c, e.skiffBin, e.logDir, e.tmp)
	}
	return nil, fmt.Errorf("no side %q", side)
}

// waitAll follows the namespace's objects from start until N are done.
func (e *env) waitAll(ctx context.Context, w workload, ns string, ctl *controller, start time.Time) (time.Duration, error) {
	progress := time.Now()
	err := benchkit.WaitWatch(ctx, e.c, w.what, *waitTimeout, pollEvery, ctl.alive, w.newList, []client.ListOption{client.InNamespace(ns)},
		func(objs map[types.NamespacedName]client.Object, _ *types.NamespacedName) (bool, string) {
			good := 0
			for _, o := range objs {
				if w.done(o) {
					good++
				}
			}
			if time.Since(progress) >= 30*time.Second {
				progress = time.Now()
				fmt.Printf("  %d of %d %s after %s\n", good, *n, w.what, time.Since(start).Round(time.Second))
			}
			return good >= *n, fmt.Sprintf("%d of %d %s", good, *n, w.what)
		})
	return time.Since(start), err
}

// requests reads kube-apiserver's apiserver_request_total by verb and
// resource; a failed read is said and counts nothing.
func (e *env) requests(ctx context.Context) map[string]float64 {
	series, err := benchkit.ScrapeSeries(ctx, e.metrics, e.cluster.Config.Host+"/metrics", "apiserver_request_total")
	if err != nil {
		fmt.Printf("reading kube-apiserver's request counts: %v\n", err)
	}
	return benchkit.ByVerbResource(series)
}

// deleteNamespace deletes ns and waits until it is gone, its pods too.
func (e *env) deleteNamespace(ctx context.Context, ns string) error {
	obj := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}
	if err := e.c.Delete(ctx, obj); err != nil {
		return fmt.Errorf("deleting namespace %s: %w", ns, err)
	}
	started := time.Now()
	err := benchkit.WaitFor(ctx, "namespace "+ns+" gone", 5*time.Minute, time.Second, nil, testcluster.Gone(e.c, obj))
	if err == nil {
		fmt.Printf("namespace %s deleted in %s\n", ns, time.Since(started).Round(time.Second))
	}
	return err
}

func secs(d time.Duration) string { return fmt.Sprintf("%.1f s", d.Seconds()) }
