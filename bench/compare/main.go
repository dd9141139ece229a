// Command compare benchmarks steady-state comparison: it starts the local
// control plane, applies 1,000 applications of 5 objects each, fills the
// cluster cache and compares every live object with its desired state.
// It prints the time and allocations of one full pass, the memory of the
// cache, and a baseline measured in the same run: reflect.DeepEqual over
// the same pairs (the naive comparison, which reports false drift).
//
//	go run ./bench/compare [-apps 1000]
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"reflect"
	"runtime"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/skiffcd/skiff/internal/clustercache"
	"github.com/skiffcd/skiff/internal/diff"
	"github.com/skiffcd/skiff/internal/testcluster"
)

func main() {
	apps := flag.Int("apps", 1000, "number of applications (5 objects each)")
	flag.Parse()
	if err := run(*apps); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

func run(apps int) error {
	ctx := context.Background()
	cluster, err := testcluster.Start(ctx, testcluster.Options{})
	if err != nil {
		return err
	}
	defer cluster.Stop()
	c, err := client.New(cluster.Config, client.Options{})
	if err != nil {
		return err
	}

	desired := map[string][]*unstructured.Unstructured{}
	for i := range apps {
		app := fmt.Sprintf("app-%04d", i)
		objs, err := appObjects(app)
		if err != nil {
			return err
		}
		desired[app] = objs
	}
	start := time.Now()
	if err := applyAll(ctx, c, desired); err != nil {
		return err
	}
	fmt.Printf("applied %d objects in %s\n", apps*5, time.Since(start).Round(time.Millisecond))

	before := heap()
	cache, err := clustercache.New(cluster.Config, clustercache.Options{})
	if err != nil {
		return err
	}
	cacheCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	start = time.Now()
	if err := cache.Start(cacheCtx); err != nil {
		return err
	}
	synced := time.Since(start)
	cacheBytes := heap() - before

	pass := func(compare func(desired, live *unstructured.Unstructured) bool) (time.Duration, uint64, int, error) {
		var ms0, ms1 runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&ms0)
		start := time.Now()
		modified := 0
		for app, objs := range desired {
			for _, d := range objs {
				live, ok := cache.Get(clustercache.KeyOf(d))
				if !ok {
					return 0, 0, 0, fmt.Errorf("%s: %s missing from the cache", app, clustercache.KeyOf(d))
				}
				if compare(d, live) {
					modified++
				}
			}
		}
		elapsed := time.Since(start)
		runtime.ReadMemStats(&ms1)
		return elapsed, ms1.Mallocs - ms0.Mallocs, modified, nil
	}
	naive, naiveAllocs, naiveModified, err := pass(func(d, l *unstructured.Unstructured) bool {
		return !reflect.DeepEqual(d.Object["spec"], l.Object["spec"]) || !reflect.DeepEqual(d.Object["data"], l.Object["data"])
	})
	if err != nil {
		return err
	}
	var compareErr error
	full, fullAllocs, fullModified, err := pass(func(d, l *unstructured.Unstructured) bool {
		res, err := diff.Compare(d, l, diff.Options{})
		if err != nil && compareErr == nil {
			compareErr = err
		}
		return res.Modified
	})
	if err != nil {
		return err
	}
	if compareErr != nil {
		return compareErr
	}
	n := apps * 5
	fmt.Printf("compare benchmark: %d apps x 5 = %d live objects, GOMAXPROCS=%d\n", apps, n, runtime.GOMAXPROCS(0))
	fmt.Printf("  baseline reflect.DeepEqual pass:  %10s  %8d allocs  %5d reported modified (false drift from defaults)\n",
		naive.Round(time.Microsecond), naiveAllocs, naiveModified)
	fmt.Printf("  diff.Compare full pass:           %10s  %8d allocs  %5d reported modified  = %.1fx baseline time\n",
		full.Round(time.Microsecond), fullAllocs, fullModified, float64(full)/float64(naive))
	fmt.Printf("  per object:                       %10s  %8d allocs\n",
		(full / time.Duration(n)).Round(time.Nanosecond), fullAllocs/uint64(n))
	fmt.Printf("  cluster cache: %d objects, synced in %s, heap %.1f MiB (%.1f KiB per object)\n",
		cache.Len(), synced.Round(time.Millisecond), float64(cacheBytes)/(1<<20), float64(cacheBytes)/1024/float64(cache.Len()))
	return nil
}

func heap() int64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}

// applyAll server-side applies every object with 8 workers.
func applyAll(ctx context.Context, c client.Client, desired map[string][]*unstructured.Unstructured) error {
	work := make(chan *unstructured.Unstructured)
	errs := make(chan error, 8)
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for obj := range work {
				if err := c.Apply(ctx, client.ApplyConfigurationFromUnstructured(obj.DeepCopy()), client.FieldOwner(diff.FieldManager), client.ForceOwnership); err != nil {
					select {
					case errs <- fmt.Errorf("applying %s: %w", clustercache.KeyOf(obj), err):
					default:
					}
				}
			}
		}()
	}
	for _, objs := range desired {
		for _, o := range objs {
			work <- o
		}
	}
	close(work)
	wg.Wait()
	select {
	case err := <-errs:
		return err
	default:
		return nil
	}
}

func appObjects(app string) ([]*unstructured.Unstructured, error) {
	docs := []string{
		`apiVersion: apps/v1
kind: Deployment
metadata: {name: APP, namespace: default}
spec:
  replicas: 0
  selector: {matchLabels: {app: APP}}
  template:
    metadata: {labels: {app: APP}}
    spec:
      containers:
      - name: web
        image: nginx:1.27
        ports: [{containerPort: 80}]
        env: [{name: MODE, value: prod}, {name: LEVEL, value: info}]
        resources: {requests: {cpu: 100m, memory: 64Mi}, limits: {memory: 128Mi}}`,
		`apiVersion: v1
kind: Service
metadata: {name: APP, namespace: default}
spec:
  selector: {app: APP}
  ports: [{port: 80, targetPort: 80}]`,
		`apiVersion: v1
kind: ConfigMap
metadata: {name: APP-config, namespace: default}
data: {LOG_LEVEL: info, FEATURE: "on"}`,
		`apiVersion: v1
kind: Secret
metadata: {name: APP-secret, namespace: default}
stringData: {password: not-a-real-one}`,
		`apiVersion: v1
kind: ServiceAccount
metadata: {name: APP, namespace: default}`,
	}
	var out []*unstructured.Unstructured
	for _, d := range docs {
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal([]byte(strings.ReplaceAll(d, "APP", app)), &u.Object); err != nil {
			return nil, err
		}
		ann := map[string]string{clustercache.TrackingAnnotation: clustercache.TrackingID(app, u)}
		u.SetAnnotations(ann)
		out = append(out, u)
	}
	return out, nil
}
