package syncengine

import (
	"context"
	"testing"
	"time"

	"github.com/skiffcd/skiff/api/v1alpha1"
)

// A prune of an object with Prune=confirm holds the sync, Running, after
// the waves before it and with the object in place, until the run is
// approved; the approved run prunes it.
func TestPruneConfirmWaitsForTheApproval(t *testing.T) {
	e := newEngine(t)
	ns := cluster.Namespace(t)
	first := manifests(t, ns,
		"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\ndata: {level: info}",
		"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: precious, annotations: {argocd.argoproj.io/sync-options: Prune=confirm}}")
	if res := runSync(t, e, ns, first, nil, false, false); res.Phase != v1alpha1.OperationSucceeded {
		t.Fatalf("first sync: %s: %s", res.Phase, res.Message)
	}
	next := manifests(t, ns, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\ndata: {level: debug}")
	run := func(approved bool) Result {
		opts := DefaultOptions()
		plan, err := NewPlan(PlanInput{Desired: next, Live: live(t, e.Client, first), Prune: true, Options: opts})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		return e.Run(ctx, Request{App: "shop", Namespace: ns, Plan: plan, Options: opts, PruneApproved: approved})
	}

	res := run(false)
	if res.Phase != v1alpha1.OperationRunning || res.Message != "waiting for pruning confirmation of v1/ConfigMap/precious" {
		t.Fatalf("unapproved sync: %s: %q, want Running, waiting for the confirmation", res.Phase, res.Message)
	}
	if got := live(t, e.Client, first); len(got) != 2 {
		t.Fatalf("%d of 2 objects left by the unapproved sync", len(got))
	}
	if r := resultFor(res, "ConfigMap", "settings"); r == nil || r.Status != v1alpha1.ResultCodeSynced {
		t.Errorf("the wave before the prune did not run: %+v", res.Resources)
	}

	res = run(true)
	if res.Phase != v1alpha1.OperationSucceeded {
		t.Fatalf("approved sync: %s: %s", res.Phase, res.Message)
	}
	if r := resultFor(res, "ConfigMap", "precious"); r == nil || r.Status != v1alpha1.ResultCodePruned {
		t.Errorf("the approved sync did not prune the Prune=confirm object: %+v", res.Resources)
	}
}
