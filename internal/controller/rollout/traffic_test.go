package rollout

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/skiffcd/skiff/api/v1alpha1"
)

// routeWeights reads "service=weight" of every backendRef of an HTTPRoute.
func routeWeights(t *testing.T, c client.Client, ns, name string) map[string]int64 {
	t.Helper()
	route := &unstructured.Unstructured{}
	route.SetAPIVersion("gateway.networking.k8s.io/v1")
	route.SetKind("HTTPRoute")
	if err := c.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, route); err != nil {
		t.Fatal(err)
	}
	out := map[string]int64{}
	rules, _, _ := unstructured.NestedSlice(route.Object, "spec", "rules")
	for _, rule := range rules {
		refs, _, _ := unstructured.NestedSlice(rule.(map[string]any), "backendRefs")
		for _, ref := range refs {
			m := ref.(map[string]any)
			w, _, _ := unstructured.NestedInt64(m, "weight")
			out[m["name"].(string)] = w
		}
	}
	return out
}

// allTrafficOnStable holds when demo-route sends everything to the stable
// Service.
func allTrafficOnStable(t *testing.T, c client.Client, ns string) func() error {
	return func() error {
		if w := routeWeights(t, c, ns, "demo-route"); w["canary-demo-preview"] != 0 || w["canary-demo"] != 100 {
			return fmt.Errorf("route weights %v", w)
		}
		return nil
	}
}

// With a Gateway API router the weight is set on the HTTPRoute, the canary
// is sized from the weight, and the stable side stays at full size.
func TestCanaryWithGatewayAPISetsRouteWeights(t *testing.T) {
	c := startController(t)
	ns := cluster.Namespace(t)
	createHTTPRoute(t, c, ns)
	ro, first := firstRevision(t, c, ns, "canary-services.yml", "canary-gateway.yml")
	stable := first.Status.CurrentPodHash

	canary := setImage(t, c, ro, "argoproj/rollouts-demo:yellow")
	paused := waitAtPause(t, c, ro, canary, 1)
	if w := paused.Status.Canary.Weights; w == nil || w.Canary.Weight != 30 || w.Stable.Weight != 70 ||
		w.Canary.PodTemplateHash != canary || w.Stable.PodTemplateHash != stable {
		t.Errorf("status.canary.weights = %+v, want canary 30 (%s) stable 70 (%s)", w, canary, stable)
	}
	if got := routeWeights(t, c, ns, "demo-route"); got["canary-demo-preview"] != 30 || got["canary-demo"] != 70 {
		t.Errorf("HTTPRoute weights = %v, want canary 30 stable 70", got)
	}
	waitForSplit(t, c, ro, canary, stable, "2/2", "4/4")

	promote(t, c, ro)
	got := waitFor(t, c, ro, "Healthy on the new revision", healthyAt)
	if got.Status.StableRS != canary {
		t.Errorf("status after promote: %s", describe(got))
	}
	waitUntil(t, "all traffic back on the stable Service", allTrafficOnStable(t, c, ns))
	if ss := serviceHash(t, c, ns, "canary-demo"); ss != canary {
		t.Errorf("stable Service selects %s after promotion, want %s", ss, canary)
	}
}

// An abort of a dynamicStableScale canary at 80 % brings the stable side
// back one setWeight step at a time (2, 5, 8, then 10 pods), moving the
// traffic back as its pods become available, as Argo Rollouts does; not to
// 10 pods and all traffic at once onto 2 stable pods.
func TestCanaryDynamicStableScaleAbortStepsBack(t *testing.T) {
	c := startController(t)
	ns := cluster.Namespace(t)
	createHTTPRoute(t, c, ns)
	ro, first := firstRevision(t, c, ns, "canary-services.yml", "canary-dynamic.yml")
	stable := first.Status.CurrentPodHash
	canary := setImage(t, c, ro, "argoproj/rollouts-demo:yellow")
	waitAtPause(t, c, ro, canary, 3)
	waitForSplit(t, c, ro, canary, stable, "8/8", "2/2")
	stableRS := replicaSets(t, c, ro)[stable].Name

	aborted := time.Now().Truncate(time.Second)
	patchStatus(t, c, ro, `{"status":{"abort":true}}`)
	waitForSplit(t, c, ro, canary, stable, "0/0", "10/10")
	waitUntil(t, "all traffic back on the stable Service", allTrafficOnStable(t, c, ns))
	var ups []string
	waitUntil(t, "the stable side's scale-up events", func() error {
		ups = notes(scaleEvents(t, c, ns, aborted, "Scaled up ReplicaSet "+stableRS+" "))
		return lastScaledTo(ups, 10)
	})
	var steps []string
	for _, note := range ups {
		steps = append(steps, note[strings.LastIndex(note, " from ")+1:])
	}
	if got, want := strings.Join(steps, ", "), "from 2 to 5, from 5 to 8, from 8 to 10"; got != want {
		t.Errorf("the stable side scaled up %s, want %s", got, want)
	}
	if cs := serviceHash(t, c, ns, "canary-demo-preview"); cs != stable {
		t.Errorf("canary Service selects %s after the abort, want the stable %s", cs, stable)
	}
}

// An aborted traffic-routed canary sends all traffic back at once but
// keeps its pods for abortScaleDownDelaySeconds once the stable side can
// take the traffic, as Argo Rollouts does, so requests in flight finish.
func TestCanaryAbortKeepsTheCanaryForAbortScaleDownDelay(t *testing.T) {
	c := startController(t)
	ns := cluster.Namespace(t)
	createHTTPRoute(t, c, ns)
	ro, first := firstRevision(t, c, ns, "canary-services.yml", "canary-gateway.yml")
	stable := first.Status.CurrentPodHash
	editSpec(t, c, ro, func(spec *v1alpha1.RolloutSpec) {
		spec.Strategy.Canary.AbortScaleDownDelaySeconds = ptr.To[int32](3)
	})
	canary := setImage(t, c, ro, "argoproj/rollouts-demo:yellow")
	waitAtPause(t, c, ro, canary, 1)
	waitForSplit(t, c, ro, canary, stable, "2/2", "4/4")
	canaryRS := replicaSets(t, c, ro)[canary].Name

	aborted := time.Now().Truncate(time.Second)
	patchStatus(t, c, ro, `{"status":{"abort":true}}`)
	waitUntil(t, "all traffic back on the stable Service", allTrafficOnStable(t, c, ns))
	if got := rsCounts(t, c, ro, canary); got != "2/2" {
		t.Errorf("canary ReplicaSet right after the abort = %s, want 2/2 until abortScaleDownDelaySeconds", got)
	}
	waitForSplit(t, c, ro, canary, stable, "0/0", "4/4")
	downs := scaleEvents(t, c, ns, aborted, "Scaled down ReplicaSet "+canaryRS+" ")
	if len(downs) != 1 || !strings.HasSuffix(downs[0].Note, " from 2 to 0") {
		t.Fatalf("the canary's scale-downs after the abort: %v, want one from 2 to 0", notes(downs))
	}
	if waited := downs[0].EventTime.Sub(aborted); waited < 2*time.Second {
		t.Errorf("the canary went down %s after the abort, want abortScaleDownDelaySeconds (3 s)", waited)
	}
}

// createHTTPRoute creates testdata/httproute.yml in ns.
func createHTTPRoute(t *testing.T, c client.Client, ns string) {
	t.Helper()
	data, err := os.ReadFile("testdata/httproute.yml")
	if err != nil {
		t.Fatal(err)
	}
	route := &unstructured.Unstructured{}
	if err := yaml.Unmarshal(data, &route.Object); err != nil {
		t.Fatal(err)
	}
	route.SetNamespace(ns)
	create(t, c, route)
}

// A traffic router Skiff does not implement is reported in the Rollout's
// status (InvalidSpec, phase Degraded) and nothing is scaled, as for any
// spec Skiff cannot run; it is not an error retried in the log.
func TestAnUnsupportedTrafficRouterIsAnInvalidSpec(t *testing.T) {
	c := startController(t)
	ns := cluster.Namespace(t)
	createServices(t, c, "canary-services.yml", ns)
	data, err := os.ReadFile("testdata/canary-istio.yml")
	if err != nil {
		t.Fatal(err)
	}
	raw := &unstructured.Unstructured{}
	if err := yaml.Unmarshal(data, &raw.Object); err != nil {
		t.Fatal(err)
	}
	raw.SetNamespace(ns)
	if err := c.Create(context.Background(), raw); err != nil {
		t.Fatal(err)
	}
	ro := &v1alpha1.Rollout{}
	ro.Name, ro.Namespace = raw.GetName(), ns
	got := waitFor(t, c, ro, "InvalidSpec for the Istio router", phaseIs(v1alpha1.RolloutPhaseDegraded))
	cond := condition(got, v1alpha1.InvalidSpec)
	if cond.Status != corev1.ConditionTrue || !strings.Contains(cond.Message, "trafficRouting.istio not supported by Skiff") {
		t.Errorf("InvalidSpec condition = %+v, want it to name trafficRouting.istio", cond)
	}
	for hash, rs := range replicaSets(t, c, ro) {
		if rs.Spec.Replicas != nil && *rs.Spec.Replicas != 0 {
			t.Errorf("ReplicaSet %s scaled to %d under an invalid spec", hash, *rs.Spec.Replicas)
		}
	}
}
