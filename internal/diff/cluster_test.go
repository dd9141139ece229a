package diff

import (
	"context"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// TestCompareAgainstTheCluster checks both comparisons against objects a real
// API server defaulted and other managers edited.
func TestCompareAgainstTheCluster(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := client.New(cluster.Config, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ns := cluster.Namespace(t)
	desired := load(t, "cluster/deployment.yaml")
	desired.SetNamespace(ns)
	if err := c.Apply(ctx, client.ApplyConfigurationFromUnstructured(desired.DeepCopy()), client.FieldOwner(FieldManager), client.ForceOwnership); err != nil {
		t.Fatalf("applying: %v", err)
	}
	get := func(t *testing.T) *unstructured.Unstructured {
		t.Helper()
		live := &unstructured.Unstructured{}
		live.SetGroupVersionKind(desired.GroupVersionKind())
		if err := c.Get(ctx, client.ObjectKeyFromObject(desired), live); err != nil {
			t.Fatalf("reading back: %v", err)
		}
		return live
	}
	patch := func(t *testing.T, manager, body string) {
		t.Helper()
		obj := &unstructured.Unstructured{}
		obj.SetGroupVersionKind(desired.GroupVersionKind())
		obj.SetName(desired.GetName())
		obj.SetNamespace(ns)
		if err := c.Patch(ctx, obj, client.RawPatch(types.MergePatchType, []byte(body)), client.FieldOwner(manager)); err != nil {
			t.Fatalf("patching as %s: %v", manager, err)
		}
	}
	// check runs both comparisons and wants the same verdict from each.
	check := func(t *testing.T, desired *unstructured.Unstructured, modified bool, diffHas ...string) {
		t.Helper()
		live := get(t)
		for name, compare := range map[string]func() (Result, error){
			"Compare":       func() (Result, error) { return Compare(desired, live, Options{}) },
			"DryRunCompare": func() (Result, error) { return DryRunCompare(ctx, c, desired, live, Options{}) },
		} {
			res, err := compare()
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if res.Modified != modified {
				t.Errorf("%s: Modified = %v, want %v; diff:\n%s", name, res.Modified, modified, res.Diff)
			}
			for _, s := range diffHas {
				if !strings.Contains(res.Diff, s) {
					t.Errorf("%s: diff lacks %q:\n%s", name, s, res.Diff)
				}
			}
		}
	}

	t.Run("the applied manifest matches what the server stored", func(t *testing.T) {
		check(t, desired, false)
	})
	t.Run("a changed image is reported by both", func(t *testing.T) {
		changed := desired.DeepCopy()
		containers, _, _ := unstructured.NestedSlice(changed.Object, "spec", "template", "spec", "containers")
		containers[0].(map[string]any)["image"] = "nginx:1.27"
		if err := unstructured.SetNestedSlice(changed.Object, containers, "spec", "template", "spec", "containers"); err != nil {
			t.Fatal(err)
		}
		check(t, changed, true, "-        image: nginx:1.26", "+        image: nginx:1.27")
	})
	t.Run("an annotation another manager added is not a difference", func(t *testing.T) {
		patch(t, "kubectl-edit", `{"metadata":{"annotations":{"example.com/note":"edited by hand"}}}`)
		check(t, desired, false)
	})
	t.Run("replicas another manager scaled to are not a difference", func(t *testing.T) {
		patch(t, "hpa-like", `{"spec":{"replicas":4}}`)
		check(t, desired, false)
	})
}

// The API server fills in the defaults of a Rollout's schema (a container
// port's protocol) when it stores it; the comparison predicts them, so the
// Rollout it stored from the manifest is not a difference.
func TestARolloutTheServerDefaultedIsNotADifference(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := client.New(cluster.Config, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	desired := load(t, "rollout/desired.yaml")
	desired.SetNamespace(cluster.Namespace(t))
	if err := c.Apply(ctx, client.ApplyConfigurationFromUnstructured(desired.DeepCopy()), client.FieldOwner(FieldManager), client.ForceOwnership); err != nil {
		t.Fatalf("applying: %v", err)
	}
	live := &unstructured.Unstructured{}
	live.SetGroupVersionKind(desired.GroupVersionKind())
	if err := c.Get(ctx, client.ObjectKeyFromObject(desired), live); err != nil {
		t.Fatal(err)
	}
	ports, _, _ := unstructured.NestedSlice(live.Object, "spec", "template", "spec", "containers")
	if p := ports[0].(map[string]any)["ports"].([]any)[0].(map[string]any)["protocol"]; p != "TCP" {
		t.Fatalf("the API server stored protocol %v, want the schema's default TCP", p)
	}
	res, err := Compare(desired, live, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Modified {
		t.Errorf("the stored Rollout differs from its manifest:\n%s", res.Diff)
	}
}
