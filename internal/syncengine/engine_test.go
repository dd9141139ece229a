package syncengine

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/skiffcd/skiff/api/v1alpha1"
	"github.com/skiffcd/skiff/internal/clustercache"
	"github.com/skiffcd/skiff/internal/diff"
	"github.com/skiffcd/skiff/internal/health"
	"github.com/skiffcd/skiff/internal/testwait"
)

func newEngine(t *testing.T) *Engine {
	t.Helper()
	c, err := client.New(cluster.Config, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return &Engine{
		Client: c,
		Health: func(u *unstructured.Unstructured) (v1alpha1.HealthStatusCode, string) {
			r := health.Assess(u)
			return r.Status, r.Message
		},
		Poll:        100 * time.Millisecond,
		WaveTimeout: time.Minute,
	}
}

// manifests parses YAML documents, putting namespaced ones in ns.
func manifests(t *testing.T, ns string, docs ...string) []*unstructured.Unstructured {
	t.Helper()
	var out []*unstructured.Unstructured
	for _, d := range docs {
		u := obj(t, d)
		if u.GetKind() != "Namespace" && u.GetNamespace() == "" {
			u.SetNamespace(ns)
		}
		out = append(out, u)
	}
	return out
}

// live reads the current state of objects, as the cluster cache would give it.
func live(t *testing.T, c client.Client, objs []*unstructured.Unstructured) []*unstructured.Unstructured {
	t.Helper()
	var out []*unstructured.Unstructured
	for _, o := range objs {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(o.GroupVersionKind())
		err := c.Get(context.Background(), client.ObjectKeyFromObject(o), u)
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, u)
	}
	return out
}

func runSync(t *testing.T, e *Engine, ns string, desired, liveObjs []*unstructured.Unstructured, prune bool, dryRun bool, options ...string) Result {
	t.Helper()
	opts, err := ParseOptions(options)
	if err != nil {
		t.Fatal(err)
	}
	plan, err := NewPlan(PlanInput{Desired: desired, Live: liveObjs, Prune: prune, Options: opts})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	return e.Run(ctx, Request{App: "shop", Namespace: ns, Plan: plan, Options: DefaultOptions(), DryRun: dryRun})
}

// syncWeb syncs testdata/web-deployment.yaml (two replicas of nginx:1.27)
// into ns as app, and returns the manifest for the test to change.
func syncWeb(t *testing.T, e *Engine, ns, app string) string {
	t.Helper()
	raw, err := os.ReadFile("testdata/web-deployment.yaml")
	if err != nil {
		t.Fatal(err)
	}
	plan, err := NewPlan(PlanInput{Desired: manifests(t, ns, string(raw)), Options: DefaultOptions()})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if res := e.Run(ctx, Request{App: app, Namespace: ns, Plan: plan, Options: DefaultOptions()}); res.Phase != v1alpha1.OperationSucceeded {
		t.Fatalf("%s's first sync: %s: %s", app, res.Phase, res.Message)
	}
	return string(raw)
}

func resultFor(res Result, kind, name string) *v1alpha1.ResourceResult {
	for i := range res.Resources {
		if res.Resources[i].Kind == kind && res.Resources[i].Name == name {
			return &res.Resources[i]
		}
	}
	return nil
}

const deploymentYAML = `apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: web, image: nginx:1.27}]`

func TestSyncAppliesTracksAndPrunes(t *testing.T) {
	e := newEngine(t)
	ns := cluster.Namespace(t)
	desired := manifests(t, ns,
		"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\ndata: {level: info}",
		"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: legacy}\ndata: {x: z}",
		deploymentYAML)

	res := runSync(t, e, ns, desired, nil, false, false)
	if res.Phase != v1alpha1.OperationSucceeded {
		t.Fatalf("first sync: %s: %s %+v", res.Phase, res.Message, res.Resources)
	}
	got := live(t, e.Client, desired)
	if len(got) != 3 {
		t.Fatalf("%d of 3 objects exist after sync", len(got))
	}
	for _, o := range got {
		if app := clustercache.OwningApp(o, clustercache.DefaultTracking()); app != "shop" {
			t.Errorf("%s/%s tracked to %q, want shop", o.GetKind(), o.GetName(), app)
		}
	}

	// Drift: someone edits a field Skiff owns; the next sync takes it back
	// (drift_test.go has the rest of that story).
	cm := got[0]
	if err := unstructured.SetNestedField(cm.Object, "debug", "data", "level"); err != nil {
		t.Fatal(err)
	}
	if err := e.Client.Update(context.Background(), cm, client.FieldOwner("kubectl-edit")); err != nil {
		t.Fatal(err)
	}
	// legacy leaves git: with prune it is deleted, the rest re-applied.
	next := []*unstructured.Unstructured{desired[0], desired[2]}
	res = runSync(t, e, ns, next, live(t, e.Client, desired), true, false)
	if res.Phase != v1alpha1.OperationSucceeded {
		t.Fatalf("second sync: %s: %s", res.Phase, res.Message)
	}
	if r := resultFor(res, "ConfigMap", "legacy"); r == nil || r.Status != v1alpha1.ResultCodePruned {
		t.Errorf("legacy result %+v, want Pruned", r)
	}
	// Foreground deletion lets the garbage collector finish the delete.
	var after []*unstructured.Unstructured
	testwait.Eventually(t, "the pruned object to go", func() error {
		if after = live(t, e.Client, desired); len(after) != 2 {
			return fmt.Errorf("%d objects, want 2", len(after))
		}
		return nil
	})
	if level, _, _ := unstructured.NestedString(after[0].Object, "data", "level"); level != "info" {
		t.Errorf("drifted value %q was not restored to info", level)
	}
}

// Validation is all or nothing: one broken object in ten applies none.
func TestSyncWithABrokenObjectAppliesNothing(t *testing.T) {
	e := newEngine(t)
	ns := cluster.Namespace(t)
	var docs []string
	for i := range 9 {
		docs = append(docs, fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm-%d}\ndata: {i: '%d'}", i, i))
	}
	docs = append(docs, strings.Replace(deploymentYAML, "replicas: 2", "replicas: -3", 1))
	desired := manifests(t, ns, docs...)

	res := runSync(t, e, ns, desired, nil, false, false)
	if res.Phase != v1alpha1.OperationFailed || !strings.Contains(res.Message, "nothing was applied") {
		t.Fatalf("got %s: %s, want a failed validation", res.Phase, res.Message)
	}
	if r := resultFor(res, "Deployment", "web"); r == nil || r.Status != v1alpha1.ResultCodeSyncFailed || !strings.Contains(r.Message, "replicas") {
		t.Errorf("Deployment result %+v, want SyncFailed naming replicas", r)
	}
	if got := live(t, e.Client, desired); len(got) != 0 {
		t.Errorf("%d objects were applied despite the broken one", len(got))
	}
}

func TestDryRunChangesNothing(t *testing.T) {
	e := newEngine(t)
	ns := cluster.Namespace(t)
	desired := manifests(t, ns, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\ndata: {level: info}")
	res := runSync(t, e, ns, desired, nil, false, true)
	if res.Phase != v1alpha1.OperationSucceeded {
		t.Fatalf("%s: %s", res.Phase, res.Message)
	}
	if got := live(t, e.Client, desired); len(got) != 0 {
		t.Errorf("dry run created %d objects", len(got))
	}
}

// migrateJobYAML is a PreSync hook that kwok runs to completion.
const migrateJobYAML = `apiVersion: batch/v1
kind: Job
metadata:
  name: migrate
  annotations: {argocd.argoproj.io/hook: PreSync}
spec:
  backoffLimit: 0
  template:
    spec:
      restartPolicy: Never
      containers: [{name: migrate, image: alpine:3.20, command: [sh, -c, "exit 0"]}]`

// A PreSync Job (a migration) must finish before the wave-1 Deployment is
// applied; kwok runs the Job's pod to completion.
func TestPreSyncHookFinishesBeforeLaterWaves(t *testing.T) {
	e := newEngine(t)
	ns := cluster.Namespace(t)
	desired := manifests(t, ns, migrateJobYAML,
		strings.Replace(deploymentYAML, "metadata: {name: web}", "metadata: {name: web, annotations: {argocd.argoproj.io/sync-wave: '1'}}", 1))

	res := runSync(t, e, ns, desired, nil, false, false)
	if res.Phase != v1alpha1.OperationSucceeded {
		t.Fatalf("%s: %s %+v", res.Phase, res.Message, res.Resources)
	}
	hook := resultFor(res, "Job", "migrate")
	if hook == nil || hook.HookType != "PreSync" || hook.HookPhase != v1alpha1.OperationSucceeded {
		t.Fatalf("hook result %+v, want a succeeded PreSync hook", hook)
	}
	objs := live(t, e.Client, desired)
	if len(objs) != 2 {
		t.Fatalf("%d of 2 objects exist", len(objs))
	}
	job, deploy := objs[0], objs[1]
	completed, _, _ := unstructured.NestedString(job.Object, "status", "completionTime")
	done, err := time.Parse(time.RFC3339, completed)
	if err != nil {
		t.Fatalf("job has no completion time: %v", err)
	}
	if created := deploy.GetCreationTimestamp().Time; created.Before(done) {
		t.Errorf("Deployment created at %s, before the PreSync Job completed at %s", created, done)
	}
}

// Right after a sync, the comparison must say Synced: the server's defaults
// (strategy, terminationMessagePath, protocol …) are not drift.
func TestDefaultedDeploymentIsSyncedRightAfterSync(t *testing.T) {
	e := newEngine(t)
	ns := cluster.Namespace(t)
	desired := manifests(t, ns, deploymentYAML, "apiVersion: v1\nkind: Service\nmetadata: {name: web}\nspec: {selector: {app: web}, ports: [{port: 80}]}")
	if res := runSync(t, e, ns, desired, nil, false, false); res.Phase != v1alpha1.OperationSucceeded {
		t.Fatalf("%s: %s", res.Phase, res.Message)
	}
	for i, l := range live(t, e.Client, desired) {
		res, err := diff.Compare(desired[i], l, diff.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if res.Modified {
			t.Errorf("%s is OutOfSync right after sync:\n%s", l.GetKind(), res.Diff)
		}
	}
}

// An app that ships a CRD and objects of its kind syncs in one go: the CRD
// is applied first and its objects once the API server serves the kind.
func TestCRDAndItsObjectsSyncTogether(t *testing.T) {
	e := newEngine(t)
	ns := cluster.Namespace(t)
	group := strings.ReplaceAll(ns, "-", "") + ".example.com"
	crd := fmt.Sprintf(`apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.%[1]s}
spec:
  group: %[1]s
  names: {kind: Widget, plural: widgets, singular: widget, listKind: WidgetList}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec: {type: object, x-kubernetes-preserve-unknown-fields: true}`, group)
	widget := fmt.Sprintf("apiVersion: %s/v1\nkind: Widget\nmetadata: {name: gear}\nspec: {teeth: 12}", group)
	desired := manifests(t, ns, widget, crd)
	t.Cleanup(func() { _ = e.Client.Delete(context.Background(), desired[1]) })

	res := runSync(t, e, ns, desired, nil, false, false)
	if res.Phase != v1alpha1.OperationSucceeded {
		t.Fatalf("%s: %s %+v", res.Phase, res.Message, res.Resources)
	}
	if got := live(t, e.Client, desired[:1]); len(got) != 1 {
		t.Errorf("the Widget was not created")
	}
}

// With ApplyOutOfSyncOnly, an object the diff finds unchanged is neither
// validated nor applied; changed ones are both.
func TestApplyOutOfSyncOnlySkipsUnchangedObjects(t *testing.T) {
	ns := cluster.Namespace(t)
	e := newEngine(t)
	desired := manifests(t, ns,
		"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: same}\ndata: {k: v}",
		"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: moved}\ndata: {k: v}",
		"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: moved-too}\ndata: {k: v}")
	if res := runSync(t, e, ns, desired, nil, false, false); res.Phase != v1alpha1.OperationSucceeded {
		t.Fatalf("first sync: %s", res.Message)
	}
	next := manifests(t, ns,
		"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: same}\ndata: {k: v}",
		"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: moved}\ndata: {k: changed}",
		"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: moved-too}\ndata: {k: changed}")
	calls := countingApplies(t, e)
	opts, err := ParseOptions([]string{"ApplyOutOfSyncOnly=true"})
	if err != nil {
		t.Fatal(err)
	}
	res := runOutOfSyncOnly(t, e, ns, next, opts)
	if res.Phase != v1alpha1.OperationSucceeded {
		t.Fatalf("sync: %s", res.Message)
	}
	if r := resultFor(res, "ConfigMap", "same"); r == nil || r.Message != "unchanged" {
		t.Errorf("the unchanged ConfigMap's result: %+v", r)
	}
	got := calls()
	if got["same"]+got["same dry run"] != 0 || got["moved"] != 1 || got["moved dry run"] != 1 || got["moved-too"] != 1 || got["moved-too dry run"] != 1 {
		t.Errorf("apply calls %v: want one dry run and one apply of each changed ConfigMap, none of the unchanged one", got)
	}
}

// A sync whose only change is one object applies it without a dry run: a
// refused apply would change nothing either. Result.Applied holds the object
// the write produced.
func TestASingleChangeSkipsTheDryRun(t *testing.T) {
	ns := cluster.Namespace(t)
	e := newEngine(t)
	desired := manifests(t, ns,
		"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: same}\ndata: {k: v}",
		"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: moved}\ndata: {k: v}")
	if res := runSync(t, e, ns, desired, nil, false, false); res.Phase != v1alpha1.OperationSucceeded {
		t.Fatalf("first sync: %s", res.Message)
	}
	opts, err := ParseOptions([]string{"ApplyOutOfSyncOnly=true"})
	if err != nil {
		t.Fatal(err)
	}
	calls := countingApplies(t, e)
	next := manifests(t, ns,
		"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: same}\ndata: {k: v}",
		"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: moved}\ndata: {k: changed}")
	res := runOutOfSyncOnly(t, e, ns, next, opts)
	if res.Phase != v1alpha1.OperationSucceeded {
		t.Fatalf("sync: %s", res.Message)
	}
	if got := calls(); got["moved"] != 1 || got["moved dry run"] != 0 || got["same"]+got["same dry run"] != 0 {
		t.Errorf("apply calls %v: want one apply of the changed ConfigMap and no dry run", got)
	}
	cm := &corev1.ConfigMap{}
	if err := e.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "moved"}, cm); err != nil {
		t.Fatal(err)
	}
	key := clustercache.ResourceKey{Kind: "ConfigMap", Namespace: ns, Name: "moved"}
	if obj := res.Applied[key]; obj == nil || obj.GetResourceVersion() != cm.ResourceVersion || len(res.Applied) != 1 {
		t.Errorf("Result.Applied = %v, want only %s at resourceVersion %s", res.Applied, key, cm.ResourceVersion)
	}

	// A refused single change fails the sync and leaves the object alone.
	broken := manifests(t, ns,
		"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: same}\ndata: {k: v}",
		"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: moved}\ndata: {k: [not, a, string]}")
	if res := runOutOfSyncOnly(t, e, ns, broken, opts); res.Phase != v1alpha1.OperationFailed ||
		!strings.Contains(res.Message, "failed to apply") || !strings.Contains(res.Message, "moved") {
		t.Fatalf("a refused apply: phase %s, %q; want Failed, naming the object", res.Phase, res.Message)
	}
	after := &corev1.ConfigMap{}
	if err := e.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "moved"}, after); err != nil {
		t.Fatal(err)
	}
	if after.ResourceVersion != cm.ResourceVersion || after.Data["k"] != "changed" {
		t.Errorf("the refused change wrote the ConfigMap: %v", after.Data)
	}
}

// runOutOfSyncOnly syncs desired against what the cluster holds now, with
// the diff deciding what is unchanged.
func runOutOfSyncOnly(t *testing.T, e *Engine, ns string, desired []*unstructured.Unstructured, opts Options) Result {
	t.Helper()
	plan, err := NewPlan(PlanInput{Desired: desired, Live: live(t, e.Client, desired), Options: opts})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	return e.Run(ctx, Request{App: "shop", Namespace: ns, Plan: plan, Options: opts,
		IsModified: func(desired, live *unstructured.Unstructured) bool {
			r, err := diff.Compare(desired, live, diff.Options{})
			return err != nil || r.Modified
		}})
}

// countingApplies makes e count its apply calls by object name ("name" or
// "name dry run"); the returned function reads the counts.
func countingApplies(t *testing.T, e *Engine) func() map[string]int {
	t.Helper()
	base, err := client.NewWithWatch(cluster.Config, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	calls := map[string]int{}
	e.Client = interceptor.NewClient(base, interceptor.Funcs{
		Apply: func(ctx context.Context, c client.WithWatch, obj runtime.ApplyConfiguration, opts ...client.ApplyOption) error {
			o := &client.ApplyOptions{}
			o.ApplyOptions(opts)
			var u struct {
				Metadata struct{ Name string } `json:"metadata"`
			}
			data, err := json.Marshal(obj)
			if err != nil {
				return err
			}
			if err := json.Unmarshal(data, &u); err != nil {
				return err
			}
			call := u.Metadata.Name
			if len(o.DryRun) > 0 {
				call += " dry run"
			}
			mu.Lock()
			calls[call]++
			mu.Unlock()
			return c.Apply(ctx, obj, opts...)
		},
	})
	return func() map[string]int {
		mu.Lock()
		defer mu.Unlock()
		return maps.Clone(calls)
	}
}
