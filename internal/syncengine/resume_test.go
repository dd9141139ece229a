package syncengine

import (
	"context"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/skiffcd/skiff/api/v1alpha1"
)

// A sync tells Progress its hooks' results when it has created them and
// when they have completed; a run given those results back (Resumed) does
// not run a completed hook again, and waits for a started one whose object
// is still there instead of re-creating it.
func TestAResumedSyncTakesItsHooksOver(t *testing.T) {
	e := newEngine(t)
	ns := cluster.Namespace(t)
	desired := manifests(t, ns, migrateJobYAML, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\ndata: {level: info}")
	var progress [][]v1alpha1.ResourceResult
	res := resumeSync(t, e, ns, desired, nil, func(results []v1alpha1.ResourceResult) { progress = append(progress, results) })
	if res.Phase != v1alpha1.OperationSucceeded {
		t.Fatalf("first run: %s: %s", res.Phase, res.Message)
	}
	var phases []string
	for _, results := range progress {
		phases = append(phases, string(results[0].HookPhase))
	}
	if got := strings.Join(phases, ","); got != "Running,Succeeded" || len(progress[1]) != 1 || progress[1][0].Name != "migrate" {
		t.Fatalf("progress told %v, want the migration Running then Succeeded", progress)
	}
	job := live(t, e.Client, desired[:1])[0]

	tests := map[string]struct {
		recorded v1alpha1.OperationPhase
	}{
		"a hook the interrupted run completed is not run again": {recorded: v1alpha1.OperationSucceeded},
		"a hook it started is waited for, not re-created":       {recorded: v1alpha1.OperationRunning},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			recorded := []v1alpha1.ResourceResult{progress[1][0]}
			recorded[0].HookPhase = tc.recorded
			res := resumeSync(t, e, ns, desired, recorded, nil)
			if res.Phase != v1alpha1.OperationSucceeded {
				t.Fatalf("resumed run: %s: %s", res.Phase, res.Message)
			}
			if hook := resultFor(res, "Job", "migrate"); hook == nil || hook.HookPhase != v1alpha1.OperationSucceeded {
				t.Errorf("hook result %+v, want Succeeded", hook)
			}
			after := live(t, e.Client, desired[:1])
			if len(after) != 1 || after[0].GetUID() != job.GetUID() {
				t.Errorf("the migration was re-created: UID %s, then %d Jobs %v", job.GetUID(), len(after), uids(after))
			}
		})
	}
}

// resumeSync syncs desired over what the cluster holds, resuming from
// recorded and telling progress.
func resumeSync(t *testing.T, e *Engine, ns string, desired []*unstructured.Unstructured, recorded []v1alpha1.ResourceResult, progress func([]v1alpha1.ResourceResult)) Result {
	t.Helper()
	plan, err := NewPlan(PlanInput{Desired: desired, Live: live(t, e.Client, desired), Options: DefaultOptions()})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	return e.Run(ctx, Request{App: "shop", Namespace: ns, Plan: plan, Options: DefaultOptions(), Resumed: recorded, Progress: progress})
}

func uids(objs []*unstructured.Unstructured) []string {
	var out []string
	for _, o := range objs {
		out = append(out, string(o.GetUID()))
	}
	return out
}
