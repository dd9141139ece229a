package syncengine

import (
	"context"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/skiffcd/skiff/api/v1alpha1"
)

// With RespectIgnoreDifferences=true a sync applies the fields the app's
// ignoreDifferences name as they are live: an HPA's replicas survive a sync
// of a new image. Without it the sync puts git's replicas back, as Argo CD
// does.
func TestRespectIgnoreDifferencesKeepsLiveValues(t *testing.T) {
	ignore := []v1alpha1.ResourceIgnoreDifferences{{Group: "apps", Kind: "Deployment", JSONPointers: []string{"/spec/replicas"}}}
	tests := map[string]struct {
		options      []string
		wantReplicas int64
	}{
		"with the option the HPA's replicas stay":      {options: []string{"RespectIgnoreDifferences=true"}, wantReplicas: 5},
		"without it git's replicas are put back":       {wantReplicas: 2},
		"turned off it is as if it were not given too": {options: []string{"RespectIgnoreDifferences=false"}, wantReplicas: 2},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			e := newEngine(t)
			ns := cluster.Namespace(t)
			deployment := syncWeb(t, e, ns, "shop")
			desired := manifests(t, ns, deployment)
			// An HPA scales through the scale subresource.
			scale := &unstructured.Unstructured{}
			scale.SetGroupVersionKind(desired[0].GroupVersionKind())
			scale.SetNamespace(ns)
			scale.SetName("web")
			if err := e.Client.SubResource("scale").Patch(context.Background(), scale,
				client.RawPatch(types.MergePatchType, []byte(`{"spec":{"replicas":5}}`)), client.FieldOwner("horizontal-pod-autoscaler")); err != nil {
				t.Fatal(err)
			}

			newImage := manifests(t, ns, strings.Replace(deployment, "nginx:1.27", "nginx:1.28", 1))
			opts, err := ParseOptions(tc.options)
			if err != nil {
				t.Fatal(err)
			}
			plan, err := NewPlan(PlanInput{Desired: newImage, Live: live(t, e.Client, newImage), Options: opts})
			if err != nil {
				t.Fatal(err)
			}
			res := e.Run(context.Background(), Request{App: "shop", Namespace: ns, Plan: plan, Options: opts, IgnoreDifferences: ignore})
			if res.Phase != v1alpha1.OperationSucceeded {
				t.Fatalf("sync of the new image: %s: %s", res.Phase, res.Message)
			}
			after := live(t, e.Client, newImage)[0]
			replicas, _, _ := unstructured.NestedInt64(after.Object, "spec", "replicas")
			containers, _, _ := unstructured.NestedSlice(after.Object, "spec", "template", "spec", "containers")
			if image := containers[0].(map[string]any)["image"]; image != "nginx:1.28" || replicas != tc.wantReplicas {
				t.Errorf("after the sync: image %v, replicas %d; want nginx:1.28 and %d", image, replicas, tc.wantReplicas)
			}
		})
	}
}
