package crds_test

import (
	"context"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
)

// `kubectl scale rollout` and an HPA read and write a Rollout through its
// scale subresource: replicas from spec.replicas, current count from
// status.HPAReplicas and the pod selector from status.selector.
func TestRolloutScaleSubresourceMapsReplicasAndSelector(t *testing.T) {
	installed(t)
	ctx := context.Background()
	ns := cluster.Namespace(t)
	dyn, err := dynamic.NewForConfig(cluster.Config)
	if err != nil {
		t.Fatal(err)
	}
	rollouts := dyn.Resource(schema.GroupVersionResource{Group: "argoproj.io", Version: "v1alpha1", Resource: "rollouts"}).Namespace(ns)

	f := loadFixtures(t, "testdata/seeds/rollout-edited-with-status.yaml")[0]
	in := &unstructured.Unstructured{Object: comparable(f.obj)}
	in.SetNamespace(ns)
	status := in.Object["status"]
	created, err := rollouts.Create(ctx, in, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	created.Object["status"] = status
	if _, err := rollouts.UpdateStatus(ctx, created, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}

	scale, err := rollouts.Get(ctx, in.GetName(), metav1.GetOptions{}, "scale")
	if err != nil {
		t.Fatalf("get scale: %v", err)
	}
	specReplicas, _, _ := unstructured.NestedInt64(scale.Object, "spec", "replicas")
	statusReplicas, _, _ := unstructured.NestedInt64(scale.Object, "status", "replicas")
	selector, _, _ := unstructured.NestedString(scale.Object, "status", "selector")
	if specReplicas != 2 || statusReplicas != 2 {
		t.Errorf("scale replicas spec=%d status=%d, want 2 and 2", specReplicas, statusReplicas)
	}
	if want := "app=rollout-bg-analysis-liveness-fail,rollouts-pod-template-hash=54495f7df4"; selector != want {
		t.Errorf("scale selector %q, want %q", selector, want)
	}

	if err := unstructured.SetNestedField(scale.Object, int64(5), "spec", "replicas"); err != nil {
		t.Fatal(err)
	}
	if _, err := rollouts.Update(ctx, scale, metav1.UpdateOptions{}, "scale"); err != nil {
		t.Fatalf("update scale: %v", err)
	}
	got, err := rollouts.Get(ctx, in.GetName(), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if r, _, _ := unstructured.NestedInt64(got.Object, "spec", "replicas"); r != 5 {
		t.Errorf("spec.replicas after scaling to 5 is %d", r)
	}
}
