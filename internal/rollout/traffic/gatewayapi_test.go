package traffic

import (
	"context"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// backend is a backendRef of an HTTPRoute rule.
type backend struct {
	name   string
	weight int64
}

func createHTTPRoute(t *testing.T, c client.Client, ns, name string, rules ...[]backend) {
	t.Helper()
	var ruleList []any
	for _, rule := range rules {
		var refs []any
		for _, b := range rule {
			refs = append(refs, map[string]any{"name": b.name, "port": int64(80), "weight": b.weight})
		}
		ruleList = append(ruleList, map[string]any{"backendRefs": refs})
	}
	route := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "gateway.networking.k8s.io/v1",
		"kind":       "HTTPRoute",
		"metadata":   map[string]any{"name": name, "namespace": ns},
		"spec": map[string]any{
			"parentRefs": []any{map[string]any{"name": "gateway"}},
			"rules":      ruleList,
		},
	}}
	if err := c.Create(context.Background(), route); err != nil {
		t.Fatalf("creating HTTPRoute %s: %v", name, err)
	}
}

// routeWeights reads the backendRef weights of an HTTPRoute, rule by rule.
func routeWeights(t *testing.T, c client.Client, ns, name string) [][]backend {
	t.Helper()
	route := &unstructured.Unstructured{}
	route.SetGroupVersionKind(httpRouteGVK)
	if err := c.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, route); err != nil {
		t.Fatalf("reading HTTPRoute %s: %v", name, err)
	}
	rules, _, _ := unstructured.NestedSlice(route.Object, "spec", "rules")
	var out [][]backend
	for _, rule := range rules {
		var got []backend
		refs, _, _ := unstructured.NestedSlice(rule.(map[string]any), "backendRefs")
		for _, ref := range refs {
			m := ref.(map[string]any)
			w, _, _ := unstructured.NestedInt64(m, "weight")
			got = append(got, backend{name: m["name"].(string), weight: w})
		}
		out = append(out, got)
	}
	return out
}

func sameWeights(a, b [][]backend) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if len(a[i]) != len(b[i]) {
			return false
		}
		for j := range a[i] {
			if a[i][j] != b[i][j] {
				return false
			}
		}
	}
	return true
}

func TestGatewayAPISetsCanaryAndStableWeightsInEveryRule(t *testing.T) {
	c := newClient(t)
	ns := cluster.Namespace(t)
	createHTTPRoute(t, c, ns, "web",
		[]backend{{"app-stable", 100}, {"app-canary", 0}},
		[]backend{{"app-stable", 100}, {"other", 5}},
	)
	ro := createRollout(t, c, ns, "app", map[string]any{
		"plugins": map[string]any{GatewayAPIPlugin: map[string]any{"httpRoute": "web", "namespace": ns}},
	})
	router := onlyRouter(t, c, ro)
	if router.Type() != GatewayAPIPlugin {
		t.Errorf("Type() = %q", router.Type())
	}

	steps := []struct {
		weight int32
		want   [][]backend
	}{
		{30, [][]backend{{{"app-stable", 70}, {"app-canary", 30}}, {{"app-stable", 70}, {"other", 5}}}},
		{100, [][]backend{{{"app-stable", 0}, {"app-canary", 100}}, {{"app-stable", 0}, {"other", 5}}}},
		{0, [][]backend{{{"app-stable", 100}, {"app-canary", 0}}, {{"app-stable", 100}, {"other", 5}}}},
	}
	for _, step := range steps {
		if err := router.SetWeight(context.Background(), step.weight); err != nil {
			t.Fatalf("SetWeight(%d): %v", step.weight, err)
		}
		if got := routeWeights(t, c, ns, "web"); !sameWeights(got, step.want) {
			t.Errorf("after SetWeight(%d) the weights are %v, want %v", step.weight, got, step.want)
		}
	}
}

func TestGatewayAPISetsEveryListedRouteInTheRolloutNamespaceByDefault(t *testing.T) {
	c := newClient(t)
	ns := cluster.Namespace(t)
	createHTTPRoute(t, c, ns, "public", []backend{{"app-canary", 0}, {"app-stable", 100}})
	createHTTPRoute(t, c, ns, "internal", []backend{{"app-canary", 0}, {"app-stable", 100}})
	ro := createRollout(t, c, ns, "app", map[string]any{
		"maxTrafficWeight": int64(1000),
		"plugins": map[string]any{GatewayAPIPlugin: map[string]any{
			"httpRoute":  "public",
			"httpRoutes": []any{map[string]any{"name": "internal", "useHeaderRoutes": true}, map[string]any{"name": "public"}},
		}},
	})
	if err := onlyRouter(t, c, ro).SetWeight(context.Background(), 250); err != nil {
		t.Fatalf("SetWeight: %v", err)
	}
	want := [][]backend{{{"app-canary", 250}, {"app-stable", 750}}}
	for _, name := range []string{"public", "internal"} {
		if got := routeWeights(t, c, ns, name); !sameWeights(got, want) {
			t.Errorf("HTTPRoute %s weights %v, want %v out of maxTrafficWeight 1000", name, got, want)
		}
	}
}

func TestGatewayAPIFailsWhenTheRouteDoesNotReachBothServices(t *testing.T) {
	c := newClient(t)
	ns := cluster.Namespace(t)
	createHTTPRoute(t, c, ns, "web", []backend{{"app-stable", 100}})
	ro := createRollout(t, c, ns, "app", map[string]any{
		"plugins": map[string]any{GatewayAPIPlugin: map[string]any{"httpRoute": "web"}},
	})
	router := onlyRouter(t, c, ro)
	err := router.SetWeight(context.Background(), 10)
	if err == nil || !strings.Contains(err.Error(), "canary Service app-canary") {
		t.Fatalf("SetWeight error = %v, want one naming the missing canary Service", err)
	}
	if got := routeWeights(t, c, ns, "web"); !sameWeights(got, [][]backend{{{"app-stable", 100}}}) {
		t.Errorf("the route changed to %v although SetWeight failed", got)
	}

	missing := createRollout(t, c, ns, "missing", map[string]any{
		"plugins": map[string]any{GatewayAPIPlugin: map[string]any{"httpRoute": "absent"}},
	})
	if err := onlyRouter(t, c, missing).SetWeight(context.Background(), 10); err == nil || !strings.Contains(err.Error(), "absent") {
		t.Errorf("SetWeight on a missing HTTPRoute error = %v, want one naming it", err)
	}
}
