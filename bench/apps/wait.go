package main

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/skiffcd/skiff/api/v1alpha1"
	"github.com/skiffcd/skiff/bench/internal/benchkit"
)

// waitFor is benchkit.WaitFor, checking every pollEvery.
func waitFor(ctx context.Context, what string, limit time.Duration, alive func() error, cond func() error) error {
	return benchkit.WaitFor(ctx, what, limit, pollEvery, alive, cond)
}

// waitApps watches the Applications until n of them satisfy ok.
func waitApps(ctx context.Context, c client.WithWatch, n int, what string, alive func() error, ok func(*v1alpha1.Application) bool) error {
	start, reported, progress := time.Now(), false, time.Now()
	// Each app's verdict is kept and only the changed app's is decided
	// again: deciding every app on every event cost the bench more CPU
	// than skiff at N=10000.
	verdicts := map[types.NamespacedName]bool{}
	good := 0
	var example types.NamespacedName
	newList := func() client.ObjectList { return &v1alpha1.ApplicationList{} }
	return waitWatch(ctx, c, what, waitTimeout, alive, newList, []client.ListOption{client.InNamespace(argocdNS)}, func(objs map[types.NamespacedName]client.Object, changed *types.NamespacedName) (bool, string) {
		decide := func(key types.NamespacedName) {
			if verdicts[key] {
				good--
			}
			delete(verdicts, key)
			if obj, exists := objs[key]; exists {
				v := ok(obj.(*v1alpha1.Application))
				verdicts[key] = v
				if v {
					good++
				} else {
					example = key
				}
			}
		}
		if changed != nil {
			decide(*changed)
		} else {
			clear(verdicts)
			good = 0
			for key := range objs {
				decide(key)
			}
		}
		if good >= n {
			return true, ""
		}
		// A long wait prints how far it has got every 30 s.
		if time.Since(progress) >= 30*time.Second {
			progress = time.Now()
			fmt.Printf("  %s: %d of %d apps after %s\n", what, good, n, time.Since(start).Round(time.Second))
		}
		// A wait that drags on shows, once, where the last apps stand.
		if !reported && time.Since(start) > 15*time.Second && len(objs)-good <= 5 {
			reported = true
			for key, v := range verdicts {
				if !v {
					fmt.Printf("  still not %s after %s: %s\n", what, time.Since(start).Round(time.Second), describe(objs[key].(*v1alpha1.Application)))
				}
			}
		}
		state := fmt.Sprintf("%d of %d apps not yet %s", n-good, n, what)
		if a, exists := objs[example]; exists && !verdicts[example] {
			state += "; e.g. " + describe(a.(*v1alpha1.Application))
		}
		return false, state
	})
}

func describe(a *v1alpha1.Application) string {
	s := fmt.Sprintf("%s: sync=%s rev=%.8s health=%s", a.Name, a.Status.Sync.Status, a.Status.Sync.Revision, a.Status.Health.Status)
	if a.Status.Health.Message != "" {
		s += fmt.Sprintf(" (%s)", a.Status.Health.Message)
	}
	if op := a.Status.OperationState; op != nil {
		rev := ""
		if op.SyncResult != nil {
			rev = op.SyncResult.Revision
		}
		s += fmt.Sprintf(" operation=%s syncResult.rev=%.8s msg=%q started=%s", op.Phase, rev, op.Message, op.StartedAt.Format(time.TimeOnly))
		if op.FinishedAt != nil {
			s += " finished=" + op.FinishedAt.Format(time.TimeOnly)
		}
	}
	if at := a.Status.ReconciledAt; at != nil {
		s += " reconciledAt=" + at.Format(time.TimeOnly)
	}
	for _, r := range a.Status.Resources {
		if r.Status != v1alpha1.SyncStatusCodeSynced {
			s += fmt.Sprintf(" %s/%s:%s", r.Kind, r.Name, r.Status)
			if op := a.Status.OperationState; op != nil && op.SyncResult != nil {
				for _, res := range op.SyncResult.Resources {
					if res.Kind == r.Kind && res.Name == r.Name {
						s += fmt.Sprintf(" (last sync: %q)", res.Message)
					}
				}
			}
		}
	}
	for _, c := range a.Status.Conditions {
		s += fmt.Sprintf(" condition %s: %q", c.Type, c.Message)
	}
	return s
}

// waitWatch is benchkit.WaitWatch, its watch's checks every pollEvery.
func waitWatch(ctx context.Context, c client.WithWatch, what string, limit time.Duration, alive func() error,
	newList func() client.ObjectList, opts []client.ListOption, done func(map[types.NamespacedName]client.Object, *types.NamespacedName) (bool, string)) error {
	return benchkit.WaitWatch(ctx, c, what, limit, pollEvery, alive, newList, opts, done)
}
