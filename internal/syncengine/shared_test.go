package syncengine

import (
	"context"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/skiffcd/skiff/api/v1alpha1"
	"github.com/skiffcd/skiff/internal/clustercache"
)

func TestSharedWith(t *testing.T) {
	var object func(trackedBy string) *unstructured.Unstructured
	labelled := func(app string) *unstructured.Unstructured {
		u := object("")
		u.SetLabels(map[string]string{clustercache.InstanceLabel: app})
		return u
	}
	object = func(trackedBy string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{}
		u.SetAPIVersion("v1")
		u.SetKind("ConfigMap")
		u.SetNamespace("shop")
		u.SetName("settings")
		if trackedBy != "" {
			u.SetAnnotations(map[string]string{clustercache.TrackingAnnotation: clustercache.TrackingID(trackedBy, u)})
		}
		return u
	}
	on := Options{FailOnSharedResource: true}
	tests := map[string]struct {
		task     Task
		tracking clustercache.Tracking
		want     string
	}{
		"label tracking reads the owner from the label": {
			task: Task{Desired: object(""), Live: labelled("billing"), Options: on}, tracking: clustercache.Tracking{Mode: clustercache.TrackingLabelMode}, want: "billing",
		},
		"annotation tracking does not read the label": {
			task: Task{Desired: object(""), Live: labelled("billing"), Options: on},
		},
		"an object another app manages is shared": {
			task: Task{Desired: object(""), Live: object("billing"), Options: on}, want: "billing",
		},
		"an object this app manages is not": {
			task: Task{Desired: object(""), Live: object("shop"), Options: on},
		},
		"an object no app manages is not": {
			task: Task{Desired: object(""), Live: object(""), Options: on},
		},
		"a new object is not": {
			task: Task{Desired: object(""), Options: on},
		},
		"without the option nothing is": {
			task: Task{Desired: object(""), Live: object("billing")},
		},
		"a prune is not an apply": {
			task: Task{Live: object("billing"), Options: on},
		},
		"a hook is not": {
			task: Task{Desired: object(""), Live: object("billing"), Options: on, Hook: true},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := sharedWith(tc.task, "shop", tc.tracking); got != tc.want {
				t.Errorf("sharedWith = %q, want %q", got, tc.want)
			}
		})
	}
}

// With FailOnSharedResource=true a sync that would take over an object
// another app manages fails before applying anything; without it the sync
// takes the object over, as in Argo CD.
func TestFailOnSharedResource(t *testing.T) {
	tests := map[string]struct {
		options   []string
		wantPhase v1alpha1.OperationPhase
		wantOwner string
	}{
		"with the option the sync fails and the other app keeps it": {options: []string{"FailOnSharedResource=true"}, wantPhase: v1alpha1.OperationFailed, wantOwner: "billing"},
		"without it the sync takes it over":                         {wantPhase: v1alpha1.OperationSucceeded, wantOwner: "shop"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			e := newEngine(t)
			ns := cluster.Namespace(t)
			deployment := syncWeb(t, e, ns, "billing")
			ctx := context.Background()

			ours := manifests(t, ns, strings.Replace(deployment, "nginx:1.27", "nginx:1.28", 1))
			opts, err := ParseOptions(tc.options)
			if err != nil {
				t.Fatal(err)
			}
			plan, err := NewPlan(PlanInput{Desired: ours, Live: live(t, e.Client, ours), Options: opts})
			if err != nil {
				t.Fatal(err)
			}
			res := e.Run(ctx, Request{App: "shop", Namespace: ns, Plan: plan, Options: opts})
			if res.Phase != tc.wantPhase {
				t.Fatalf("shop's sync: %s: %s, want %s", res.Phase, res.Message, tc.wantPhase)
			}
			after := live(t, e.Client, ours)[0]
			if owner := clustercache.OwningApp(after, clustercache.DefaultTracking()); owner != tc.wantOwner {
				t.Errorf("the Deployment is tracked by %q, want %q", owner, tc.wantOwner)
			}
			containers, _, _ := unstructured.NestedSlice(after.Object, "spec", "template", "spec", "containers")
			wantImage := "nginx:1.28"
			if tc.wantPhase == v1alpha1.OperationFailed {
				wantImage = "nginx:1.27"
				if r := resultFor(res, "Deployment", "web"); r == nil || !strings.Contains(r.Message, "managed by application billing") {
					t.Errorf("the Deployment's result %+v does not name billing", r)
				}
			}
			if image := containers[0].(map[string]any)["image"]; image != wantImage {
				t.Errorf("image %v, want %s", image, wantImage)
			}
		})
	}
}
