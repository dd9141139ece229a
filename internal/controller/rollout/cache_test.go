package rollout

import (
	"context"
	"fmt"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/skiffcd/skiff/internal/rollout"
)

// The controller's ReplicaSet cache holds the ReplicaSets Rollouts made and
// none of a Deployment's, which the cluster has as well.
func TestOnlyRolloutReplicaSetsAreCached(t *testing.T) {
	var r *Reconciler
	c := cluster.StartManager(t, func(mgr ctrl.Manager) error {
		r = &Reconciler{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader()}
		return r.SetupWithManager(mgr)
	})
	ns := cluster.Namespace(t)
	dep, ro := readWorkloadRef(t, ns)
	dep.Spec.Replicas = ptr.To[int32](1)
	ro.Spec.WorkloadRef.ScaleDown = "never"
	create(t, c, dep)
	create(t, c, ro)
	waitFor(t, c, ro, "Healthy on the Deployment's template", workloadHealthyAt(t, c, ns, dep.Name))

	owners := func(list *appsv1.ReplicaSetList) map[string]string {
		got := map[string]string{}
		for _, rs := range list.Items {
			if owner := metav1.GetControllerOf(&rs); owner != nil {
				got[rs.Name] = owner.Kind
			}
		}
		return got
	}
	var all appsv1.ReplicaSetList
	waitUntil(t, "the Deployment's ReplicaSet", func() error {
		if err := c.List(context.Background(), &all, client.InNamespace(ns)); err != nil {
			t.Fatal(err)
		}
		kinds := owners(&all)
		for _, kind := range kinds {
			if kind == "Deployment" {
				return nil
			}
		}
		return fmt.Errorf("ReplicaSets owned by %v", kinds)
	})
	var cached appsv1.ReplicaSetList
	if err := r.replicaSets.List(context.Background(), &cached, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	if kinds := owners(&cached); len(kinds) != 1 {
		t.Errorf("cached ReplicaSets %v, want the Rollout's only (the cluster has %v)", kinds, owners(&all))
	}
	for _, rs := range cached.Items {
		if metav1.GetControllerOf(&rs).Kind != "Rollout" || rs.Labels[rollout.PodTemplateHashLabel] == "" {
			t.Errorf("cached ReplicaSet %s is not a Rollout's: owner %v, labels %v", rs.Name, metav1.GetControllerOf(&rs), rs.Labels)
		}
	}
}
