package traffic

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/skiffcd/skiff/api/v1alpha1"
	"github.com/skiffcd/skiff/internal/crds"
	"github.com/skiffcd/skiff/internal/testcluster"
)

var cluster *testcluster.Cluster

// TestMain runs one control plane with Skiff's CRDs and the Gateway API
// HTTPRoute CRD. testdata/gateway.networking.k8s.io_httproutes.yaml is
// config/crd/standard of sigs.k8s.io/gateway-api v1.6.3, copied unchanged.
func TestMain(m *testing.M) {
	os.Exit(testcluster.RunMainWithCRDs(m, func(c *testcluster.Cluster) {
		cluster = c
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := installHTTPRouteCRD(ctx); err != nil {
			panic(err)
		}
	}))
}

func installHTTPRouteCRD(ctx context.Context) error {
	data, err := os.ReadFile("testdata/gateway.networking.k8s.io_httproutes.yaml")
	if err != nil {
		return err
	}
	var crd apiextensionsv1.CustomResourceDefinition
	if err := yaml.Unmarshal(data, &crd); err != nil {
		return fmt.Errorf("parsing the HTTPRoute CRD: %w", err)
	}
	cs, err := apiextensionsclient.NewForConfig(cluster.Config)
	if err != nil {
		return err
	}
	crdClient := cs.ApiextensionsV1().CustomResourceDefinitions()
	if _, err := crdClient.Create(ctx, &crd, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("creating the HTTPRoute CRD: %w", err)
	}
	return crds.WaitServed(ctx, cluster.Config, []*apiextensionsv1.CustomResourceDefinition{&crd}, time.Minute)
}

func newClient(t *testing.T) client.Client {
	t.Helper()
	return cluster.Client(t)
}

// createRollout creates a canary Rollout with the given trafficRouting (kept
// raw, as a user would write it) and returns it typed.
func createRollout(t *testing.T, c client.Client, ns, name string, trafficRouting map[string]any) *v1alpha1.Rollout {
	t.Helper()
	ctx := context.Background()
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "argoproj.io/v1alpha1",
		"kind":       "Rollout",
		"metadata":   map[string]any{"name": name, "namespace": ns},
		"spec": map[string]any{
			"replicas": int64(1),
			"selector": map[string]any{"matchLabels": map[string]any{"app": name}},
			"template": map[string]any{
				"metadata": map[string]any{"labels": map[string]any{"app": name}},
				"spec":     map[string]any{"containers": []any{map[string]any{"name": "app", "image": "registry.example/app:1"}}},
			},
			"strategy": map[string]any{"canary": map[string]any{
				"canaryService":  "app-canary",
				"stableService":  "app-stable",
				"trafficRouting": trafficRouting,
			}},
		},
	}}
	if err := c.Create(ctx, u); err != nil {
		t.Fatalf("creating Rollout: %v", err)
	}
	var ro v1alpha1.Rollout
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &ro); err != nil {
		t.Fatalf("reading Rollout: %v", err)
	}
	return &ro
}

// onlyRouter builds the routers of ro and expects exactly one.
func onlyRouter(t *testing.T, c client.Client, ro *v1alpha1.Rollout) Router {
	t.Helper()
	routers, err := New(c, ro)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	if len(routers) != 1 {
		t.Fatalf("New returned %d routers, want 1", len(routers))
	}
	return routers[0]
}
