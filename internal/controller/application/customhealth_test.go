package application

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/skiffcd/skiff/api/v1alpha1"
	"github.com/skiffcd/skiff/internal/argocdcm"
	"github.com/skiffcd/skiff/internal/crds"
	"github.com/skiffcd/skiff/internal/testgit"
	"github.com/skiffcd/skiff/internal/testwait"
)

var gateKind = schema.GroupKind{Group: "health.skiff.test", Kind: "Gate"}

// An argocd-cm Lua health script judges a CRD's objects everywhere: the
// sync's waves wait for a Progressing one and go on when it turns Healthy,
// the app is Degraded with it, an edit of argocd-cm turns the health
// without a restart, and a script that loops makes it Unknown with the
// error, the controller carrying on.
func TestArgoCDConfigMapHealthScriptsJudgeCustomResources(t *testing.T) {
	ctx := context.Background()
	installGateCRD(t)
	argocd, dest := cluster.Namespace(t), cluster.Namespace(t)
	cm := &corev1.ConfigMap{}
	readYAML(t, "testdata/customhealth/argocd-cm.yaml", cm)
	cm.Namespace = argocd
	settings := followSettings(t, argocd)
	c, _, _ := startReconcilerWithSettings(t, argocd, 3*time.Second, settings)
	if err := c.Create(ctx, cm); err != nil {
		t.Fatal(err)
	}
	testwait.Eventually(t, "argocd-cm's health script to be read", func() bool {
		_, ok := settings.Current().Resource.HealthScript(gateKind)
		return ok
	})

	repo := testgit.New(t)
	repo.Commit(testgit.Dir(t, "testdata/customhealth/app", "app"))
	app := newApp(argocd, "gated", repo.URL(), "app", dest, &v1alpha1.SyncPolicy{Automated: &v1alpha1.SyncPolicyAutomated{}})
	if err := c.Create(ctx, app); err != nil {
		t.Fatal(err)
	}
	key := client.ObjectKeyFromObject(app)
	gate := &unstructured.Unstructured{}
	gate.SetGroupVersionKind(gateKind.WithVersion("v1"))
	testwait.Eventually(t, "the gate to be applied", func() error {
		return c.Get(ctx, client.ObjectKey{Namespace: dest, Name: "gate"}, gate)
	})
	running := func(a *v1alpha1.Application) bool {
		return a.Status.OperationState != nil && a.Status.OperationState.Phase == v1alpha1.OperationRunning
	}
	waitApp(t, c, key, "the sync to run", running)
	// The wave stays shut: by the built-in rules a Gate without
	// conditions would be Healthy and the ConfigMap applied at once.
	// (Comparisons wait for the operation, so status.resources may not
	// show the gate yet.)
	time.Sleep(3 * time.Second)
	if configMapExists(t, c, dest, "after") {
		t.Fatalf("wave 1 was applied while the gate of wave 0 was Progressing")
	}
	waitApp(t, c, key, "the sync still running", running)

	setPhase := func(phase string) {
		t.Helper()
		patch := []byte(`{"status":{"phase":"` + phase + `"}}`)
		if err := c.Patch(ctx, gate, client.RawPatch(types.MergePatchType, patch), client.FieldOwner("gatekeeper")); err != nil {
			t.Fatal(err)
		}
	}
	setPhase("Open")
	waitApp(t, c, key, "the sync to go on once the gate is open", func(a *v1alpha1.Application) bool {
		return statusIs(v1alpha1.SyncStatusCodeSynced, v1alpha1.HealthStatusHealthy)(a) &&
			a.Status.OperationState != nil && a.Status.OperationState.Phase == v1alpha1.OperationSucceeded
	})
	if !configMapExists(t, c, dest, "after") {
		t.Fatalf("wave 1 was not applied after the gate opened")
	}

	setPhase("Jammed")
	waitApp(t, c, key, "the app to be Degraded by its gate", func(a *v1alpha1.Application) bool {
		return a.Status.Health.Status == v1alpha1.HealthStatusDegraded && gateHealth(a).Message == "Gate is Jammed"
	})

	editScript := func(script string) {
		t.Helper()
		cm.Data["resource.customizations.health.health.skiff.test_Gate"] = script
		if err := c.Update(ctx, cm); err != nil {
			t.Fatal(err)
		}
	}
	editScript(`return {status = "Healthy", message = "edited"}`)
	waitApp(t, c, key, "the edited script to judge the gate Healthy, without a restart", func(a *v1alpha1.Application) bool {
		return a.Status.Health.Status == v1alpha1.HealthStatusHealthy && gateHealth(a).Message == "edited"
	})

	editScript(`while true do end`)
	waitApp(t, c, key, "a looping script to make the gate Unknown with the error", func(a *v1alpha1.Application) bool {
		h := gateHealth(a)
		return h.Status == v1alpha1.HealthStatusUnknown && strings.Contains(h.Message, "time limit exceeded") &&
			a.Status.Health.Status == v1alpha1.HealthStatusUnknown
	})
}

// gateHealth returns the health status.resources gives the gate.
func gateHealth(a *v1alpha1.Application) v1alpha1.HealthStatus {
	for _, r := range a.Status.Resources {
		if r.Kind == gateKind.Kind && r.Name == "gate" && r.Health != nil {
			return *r.Health
		}
	}
	return v1alpha1.HealthStatus{}
}

// followSettings follows argocd-cm in ns as skiff server does, through a
// cache of that namespace, until the test ends.
func followSettings(t *testing.T, ns string) *argocdcm.Source {
	t.Helper()
	c, err := cache.New(cluster.Config, cache.Options{DefaultNamespaces: map[string]cache.Config{ns: {}}})
	if err != nil {
		t.Fatal(err)
	}
	src := argocdcm.NewSource(c)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go func() { _ = c.Start(ctx) }()
	go func() { _ = src.Start(ctx) }()
	return src
}

// installGateCRD installs testdata/customhealth/crd.yaml, once per cluster.
func installGateCRD(t *testing.T) {
	t.Helper()
	crd := &apiextensionsv1.CustomResourceDefinition{}
	readYAML(t, "testdata/customhealth/crd.yaml", crd)
	c, err := client.New(cluster.Config, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := apiextensionsv1.AddToScheme(c.Scheme()); err != nil {
		t.Fatal(err)
	}
	if err := c.Create(context.Background(), crd); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	if err := crds.WaitServed(context.Background(), cluster.Config, []*apiextensionsv1.CustomResourceDefinition{crd}, time.Minute); err != nil {
		t.Fatal(err)
	}
}

func readYAML(t *testing.T, path string, into any) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(data, into); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}
