package manager

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/skiffcd/skiff/api/v1alpha1"
	"github.com/skiffcd/skiff/internal/testcluster"
	"github.com/skiffcd/skiff/internal/testwait"
)

// elementApps stands in for the generators: one app per List element,
// named by its name key, with the template's spec.
func elementApps(_ context.Context, set *v1alpha1.ApplicationSet) ([]v1alpha1.Application, error) {
	var out []v1alpha1.Application
	for _, e := range set.Spec.Generators[0].List.Elements {
		var params struct{ Name string }
		if err := json.Unmarshal(e.Raw, &params); err != nil {
			return nil, err
		}
		out = append(out, v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Name: params.Name}, Spec: *set.Spec.Template.Spec.DeepCopy()})
	}
	return out, nil
}

// skiff server runs the ApplicationSet controller on its leader: a set's
// apps are created, owned by it; with --appset-policy create-only, the
// server's policy wins over the set's sync and a removed element's app
// stays.
func TestApplicationSetsRunOnTheLeader(t *testing.T) {
	was := generateApplications
	generateApplications = elementApps
	t.Cleanup(func() { generateApplications = was })
	ctx := context.Background()
	ns := cluster.Namespace(t)
	runManager(t, cluster.Config, Options{Namespace: ns, LeaderElection: true, AppSetPolicy: v1alpha1.ApplicationsSyncPolicyCreateOnly}, false)
	c := cluster.Client(t)
	set := &v1alpha1.ApplicationSet{}
	testcluster.ReadYAML(t, "testdata/appset.yaml", set, ns)
	if err := c.Create(ctx, set); err != nil {
		t.Fatal(err)
	}
	apps := func() (map[string]v1alpha1.Application, error) {
		list := &v1alpha1.ApplicationList{}
		if err := c.List(ctx, list, client.InNamespace(ns)); err != nil {
			return nil, err
		}
		out := map[string]v1alpha1.Application{}
		for _, a := range list.Items {
			out[a.Name] = a
		}
		return out, nil
	}
	testwait.Eventually(t, "the set's apps", func() error {
		got, err := apps()
		if err != nil {
			return err
		}
		a := got["team-a"]
		if ref := metav1.GetControllerOf(&a); len(got) != 2 || ref == nil || ref.Name != "team" {
			return fmt.Errorf("apps %d, team-a's controller %v", len(got), ref)
		}
		return nil
	}, testwait.Timeout(60*time.Second))

	// team-b leaves the elements, team-c comes: once team-c is made, the
	// pass that could have deleted team-b is done.
	patch := client.MergeFrom(set.DeepCopy())
	set.Spec.Generators[0].List.Elements[1].Raw = []byte(`{"name":"team-c"}`)
	if err := c.Patch(ctx, set, patch); err != nil {
		t.Fatal(err)
	}
	// The status is written once a pass has made all its changes.
	testwait.Eventually(t, "team-c in the set's status", func() error {
		if err := c.Get(ctx, client.ObjectKeyFromObject(set), set); err != nil {
			return err
		}
		for _, r := range set.Status.Resources {
			if r.Name == "team-c" {
				return nil
			}
		}
		return fmt.Errorf("resources %+v", set.Status.Resources)
	}, testwait.Timeout(60*time.Second))
	got, err := apps()
	if err != nil {
		t.Fatal(err)
	}
	if b, ok := got["team-b"]; !ok || b.DeletionTimestamp != nil || set.Status.ResourcesCount != 3 {
		t.Errorf("team-b deleted under the server's create-only policy (%d resources)", set.Status.ResourcesCount)
	}
}
