package traffic

import (
	"context"
	"strings"
	"testing"

	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

func ingressRule(host, service string) networkingv1.IngressRule {
	return networkingv1.IngressRule{
		Host: host,
		IngressRuleValue: networkingv1.IngressRuleValue{HTTP: &networkingv1.HTTPIngressRuleValue{
			Paths: []networkingv1.HTTPIngressPath{{
				Path:     "/",
				PathType: ptr.To(networkingv1.PathTypePrefix),
				Backend: networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{
					Name: service, Port: networkingv1.ServiceBackendPort{Number: 80},
				}},
			}},
		}},
	}
}

func createIngress(t *testing.T, c client.Client, ns, name string, rules ...networkingv1.IngressRule) {
	t.Helper()
	ing := &networkingv1.Ingress{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Annotations: map[string]string{
			"kubernetes.io/ingress.class":                "nginx",
			"nginx.ingress.kubernetes.io/rewrite-target": "/",
		}},
		Spec: networkingv1.IngressSpec{
			IngressClassName: ptr.To("nginx"),
			TLS:              []networkingv1.IngressTLS{{Hosts: []string{"app.example"}, SecretName: "app-tls"}},
			Rules:            rules,
		},
	}
	if err := c.Create(context.Background(), ing); err != nil {
		t.Fatalf("creating Ingress %s: %v", name, err)
	}
}

func getIngress(t *testing.T, c client.Client, ns, name string) *networkingv1.Ingress {
	t.Helper()
	var ing networkingv1.Ingress
	if err := c.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, &ing); err != nil {
		t.Fatalf("reading Ingress %s: %v", name, err)
	}
	return &ing
}

func TestNginxCreatesTheCanaryIngressAndUpdatesItsWeight(t *testing.T) {
	c := newClient(t)
	ns := cluster.Namespace(t)
	createIngress(t, c, ns, "web", ingressRule("app.example", "app-stable"), ingressRule("other.example", "other"))
	ro := createRollout(t, c, ns, "app", map[string]any{
		"nginx": map[string]any{
			"stableIngress": "web",
			"additionalIngressAnnotations": map[string]any{
				"canary-by-header":                         "X-Canary",
				"nginx.ingress.kubernetes.io/load-balance": "ewma",
			},
		},
	})
	router := onlyRouter(t, c, ro)
	if router.Type() != "Nginx" {
		t.Errorf("Type() = %q", router.Type())
	}

	if err := router.SetWeight(context.Background(), 20); err != nil {
		t.Fatalf("SetWeight(20): %v", err)
	}
	canary := getIngress(t, c, ns, "app-web-canary")
	wantAnnotations := map[string]string{
		"kubernetes.io/ingress.class":                  "nginx",
		"nginx.ingress.kubernetes.io/canary":           "true",
		"nginx.ingress.kubernetes.io/canary-weight":    "20",
		"nginx.ingress.kubernetes.io/canary-by-header": "X-Canary",
		"nginx.ingress.kubernetes.io/load-balance":     "ewma",
	}
	if !sameMap(canary.Annotations, wantAnnotations) {
		t.Errorf("canary Ingress annotations %v, want %v", canary.Annotations, wantAnnotations)
	}
	if !metav1.IsControlledBy(canary, ro) {
		t.Errorf("canary Ingress owners %v, want the Rollout %s as controller", canary.OwnerReferences, ro.UID)
	}
	if len(canary.Spec.Rules) != 1 || canary.Spec.Rules[0].Host != "app.example" ||
		canary.Spec.Rules[0].HTTP.Paths[0].Backend.Service.Name != "app-canary" {
		t.Errorf("canary Ingress rules %+v, want only the app.example rule pointing at app-canary", canary.Spec.Rules)
	}
	if ptr.Deref(canary.Spec.IngressClassName, "") != "nginx" || len(canary.Spec.TLS) != 1 || canary.Spec.TLS[0].SecretName != "app-tls" {
		t.Errorf("canary Ingress class %v and TLS %+v, want those of the stable Ingress", canary.Spec.IngressClassName, canary.Spec.TLS)
	}

	if err := router.SetWeight(context.Background(), 60); err != nil {
		t.Fatalf("SetWeight(60): %v", err)
	}
	if got := getIngress(t, c, ns, "app-web-canary").Annotations["nginx.ingress.kubernetes.io/canary-weight"]; got != "60" {
		t.Errorf("canary-weight after SetWeight(60) = %q", got)
	}
	stable := getIngress(t, c, ns, "web")
	if stable.Spec.Rules[0].HTTP.Paths[0].Backend.Service.Name != "app-stable" || stable.Annotations["nginx.ingress.kubernetes.io/canary"] != "" {
		t.Errorf("the stable Ingress changed: %+v", stable)
	}
}

func TestNginxHandlesEveryStableIngressWithItsPrefixAndWeightTotal(t *testing.T) {
	c := newClient(t)
	ns := cluster.Namespace(t)
	createIngress(t, c, ns, "public", ingressRule("app.example", "app-stable"))
	createIngress(t, c, ns, "internal", ingressRule("app.internal", "app-stable"))
	ro := createRollout(t, c, ns, "app", map[string]any{
		"maxTrafficWeight": int64(1000),
		"nginx": map[string]any{
			"stableIngress":                "ignored-when-stableIngresses-is-set",
			"stableIngresses":              []any{"public", "internal"},
			"annotationPrefix":             "custom.nginx.example",
			"additionalIngressAnnotations": map[string]any{"canary-by-cookie": "canary"},
		},
	})
	if err := onlyRouter(t, c, ro).SetWeight(context.Background(), 125); err != nil {
		t.Fatalf("SetWeight: %v", err)
	}
	for _, name := range []string{"app-public-canary", "app-internal-canary"} {
		got := getIngress(t, c, ns, name).Annotations
		want := map[string]string{
			"kubernetes.io/ingress.class":              "nginx",
			"custom.nginx.example/canary":              "true",
			"custom.nginx.example/canary-weight":       "125",
			"custom.nginx.example/canary-weight-total": "1000",
			"custom.nginx.example/canary-by-cookie":    "canary",
		}
		if !sameMap(got, want) {
			t.Errorf("%s annotations %v, want %v", name, got, want)
		}
	}
}

func TestNginxRefusesAnIngressItDoesNotControlAndAStableIngressWithoutTheService(t *testing.T) {
	c := newClient(t)
	ns := cluster.Namespace(t)
	createIngress(t, c, ns, "web", ingressRule("app.example", "app-stable"))
	createIngress(t, c, ns, "app-web-canary", ingressRule("app.example", "someone-else"))
	ro := createRollout(t, c, ns, "app", map[string]any{"nginx": map[string]any{"stableIngress": "web"}})
	err := onlyRouter(t, c, ro).SetWeight(context.Background(), 10)
	if err == nil || !strings.Contains(err.Error(), "not controlled by Rollout app") {
		t.Fatalf("SetWeight error = %v, want a refusal to take over app-web-canary", err)
	}
	if got := getIngress(t, c, ns, "app-web-canary"); got.Annotations["nginx.ingress.kubernetes.io/canary-weight"] != "" {
		t.Errorf("the foreign Ingress was changed: %v", got.Annotations)
	}

	createIngress(t, c, ns, "elsewhere", ingressRule("app.example", "other"))
	other := createRollout(t, c, ns, "other", map[string]any{"nginx": map[string]any{"stableIngress": "elsewhere"}})
	err = onlyRouter(t, c, other).SetWeight(context.Background(), 10)
	if err == nil || !strings.Contains(err.Error(), "no rule with a backend to the stable Service app-stable") {
		t.Fatalf("SetWeight error = %v, want one about the missing stable Service backend", err)
	}
}

func TestCanaryIngressNameFitsAnObjectName(t *testing.T) {
	if got := CanaryIngressName("app", "web"); got != "app-web-canary" {
		t.Errorf("CanaryIngressName = %q", got)
	}
	long := CanaryIngressName(strings.Repeat("r", 200), strings.Repeat("i", 100))
	if len(long) != 253 || !strings.HasSuffix(long, "-canary") || !strings.HasPrefix(long, strings.Repeat("r", 200)+"-i") {
		t.Errorf("long CanaryIngressName has length %d: %q", len(long), long)
	}
}

func sameMap(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if bv, ok := b[k]; !ok || bv != v {
			return false
		}
	}
	return true
}
