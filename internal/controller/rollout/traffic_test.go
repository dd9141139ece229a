package rollout

import (
	"context"
	"fmt"
	"os"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"
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

// With a Gateway API router the weight is set on the HTTPRoute, the canary
// is sized from the weight, and the stable side stays at full size.
func TestCanaryWithGatewayAPISetsRouteWeights(t *testing.T) {
	c := startController(t)
	ns := cluster.Namespace(t)
	createServices(t, c, "canary-services.yml", ns)
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
	ro := readRollout(t, "canary-gateway.yml", ns)
	create(t, c, ro)
	stable := waitFor(t, c, ro, "first revision Healthy", healthyAt).Status.CurrentPodHash

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
	waitUntil(t, "all traffic back on the stable Service", func() (bool, string) {
		w := routeWeights(t, c, ns, "demo-route")
		return w["canary-demo-preview"] == 0 && w["canary-demo"] == 100, fmt.Sprint(w)
	})
	if ss := serviceHash(t, c, ns, "canary-demo"); ss != canary {
		t.Errorf("stable Service selects %s after promotion, want %s", ss, canary)
	}
}
