package syncengine

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/skiffcd/skiff/api/v1alpha1"
	"github.com/skiffcd/skiff/internal/crds"
	"github.com/skiffcd/skiff/internal/health"
)

// The objects of one wave are applied together; a Namespace they live in
// goes first, and results come back in plan order however the applies
// finished.
func TestAWaveAppliesTogetherAndReportsInPlanOrder(t *testing.T) {
	e := newEngine(t)
	ns := cluster.Namespace(t)
	target := ns + "-extra"
	docs := []string{fmt.Sprintf("apiVersion: v1\nkind: Namespace\nmetadata: {name: %s}", target)}
	for i := range 3 * maxInFlight {
		docs = append(docs, fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm-%02d, namespace: %s}\ndata: {i: %q}", i, target, fmt.Sprint(i)))
	}
	desired := manifests(t, ns, docs...)
	t.Cleanup(func() {
		_ = e.Client.Delete(t.Context(), desired[0])
	})

	res := runSync(t, e, ns, desired, nil, false, false)
	if res.Phase != v1alpha1.OperationSucceeded {
		t.Fatalf("sync: %s: %s %+v", res.Phase, res.Message, res.Resources)
	}
	if got := len(live(t, e.Client, desired)); got != len(desired) {
		t.Fatalf("%d of %d objects exist after sync", got, len(desired))
	}

	plan, err := NewPlan(PlanInput{Desired: desired, Options: DefaultOptions()})
	if err != nil {
		t.Fatal(err)
	}
	var want, got []string
	for _, task := range plan.Tasks {
		want = append(want, task.Key.Kind+"/"+task.Key.Name)
	}
	for _, r := range res.Resources {
		got = append(got, r.Kind+"/"+r.Name)
	}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("results out of plan order:\n got %v\nwant %v", got, want)
	}
}

// A wave does not wait for what Argo CD does not wait for: an object
// annotated ignore-healthcheck, and a child Application (app of apps)
// unless argocd-cm restores the Application health check, whereupon it
// does. Neither here ever turns healthy: a LoadBalancer Service without a
// load balancer, an Application no controller judges.
func TestWavesDoNotWaitForIgnoredHealthNorChildApplications(t *testing.T) {
	if err := crds.Install(t.Context(), cluster.Config, time.Minute); err != nil {
		t.Fatal(err)
	}
	e := newEngine(t)
	e.WaveTimeout = 3 * time.Second
	ns := cluster.Namespace(t)
	desired := manifests(t, ns, `apiVersion: v1
kind: Service
metadata: {name: edge, annotations: {argocd.argoproj.io/ignore-healthcheck: "true"}}
spec: {type: LoadBalancer, ports: [{port: 80}]}`, `apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: child}
spec:
  project: default
  destination: {server: https://kubernetes.default.svc, namespace: child}
  source: {repoURL: https://git.example/child.git, path: .}`, `apiVersion: v1
kind: ConfigMap
metadata: {name: after, annotations: {argocd.argoproj.io/sync-wave: "1"}}`)

	res := runSync(t, e, ns, desired, nil, false, false)
	if res.Phase != v1alpha1.OperationSucceeded {
		t.Fatalf("sync: %s: %s; want the next wave applied without waiting", res.Phase, res.Message)
	}
	if got := len(live(t, e.Client, desired)); got != 3 {
		t.Fatalf("%d of 3 objects exist after the sync", got)
	}

	e.Awaited = func(u *unstructured.Unstructured) bool { return health.Awaited(u, true) }
	res = runSync(t, e, ns, desired, nil, false, false)
	// Waiting, it may run out of time in the client's rate limiter rather
	// than between two reads: either way the child held the wave.
	if res.Phase != v1alpha1.OperationFailed || !strings.Contains(res.Message, "application "+ns+"/child: ") || strings.Contains(res.Message, "edge") {
		t.Fatalf("sync with the Application health check restored: %s: %s; want it failed on the child Application's health alone", res.Phase, res.Message)
	}
}
