package syncengine

import (
	"fmt"
	"strings"
	"testing"

	"github.com/skiffcd/skiff/api/v1alpha1"
)

// The objects of one wave are applied together; a Namespace they live in
// goes first, and results come back in plan order however the applies
// finished.
func TestAWaveAppliesTogetherAndReportsInPlanOrder(t *testing.T) {
	e := newEngine(t)
	ns := cluster.Namespace(t)
	target := ns + "-extra"
	docs := []string{fmt.Sprintf("apiVersion: v1\nkind: Namespace\nmetadata: {name: %s}", target)}
	for i := range 3 * maxInFlight {
		docs = append(docs, fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm-%02d, namespace: %s}\ndata: {i: %q}", i, target, fmt.Sprint(i)))
	}
	desired := manifests(t, ns, docs...)
	t.Cleanup(func() {
		_ = e.Client.Delete(t.Context(), desired[0])
	})

	res := runSync(t, e, ns, desired, nil, false, false)
	if res.Phase != v1alpha1.OperationSucceeded {
		t.Fatalf("sync: %s: %s %+v", res.Phase, res.Message, res.Resources)
	}
	if got := len(live(t, e.Client, desired)); got != len(desired) {
		t.Fatalf("%d of %d objects exist after sync", got, len(desired))
	}

	plan, err := NewPlan(PlanInput{Desired: desired, Options: DefaultOptions()})
	if err != nil {
		t.Fatal(err)
	}
	var want, got []string
	for _, task := range plan.Tasks {
		want = append(want, task.Key.Kind+"/"+task.Key.Name)
	}
	for _, r := range res.Resources {
		got = append(got, r.Kind+"/"+r.Name)
	}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("results out of plan order:\n got %v\nwant %v", got, want)
	}
}
