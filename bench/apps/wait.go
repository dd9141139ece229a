package main

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/skiffcd/skiff/api/v1alpha1"
	"github.com/skiffcd/skiff/internal/testwait"
)

// waitFor checks cond every pollEvery for at most limit; alive (optional)
// ends the wait early, at the first check that finds skiff server gone.
func waitFor(ctx context.Context, what string, limit time.Duration, alive func() error, cond func() error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var gone error
	err := testwait.Until(ctx, what, func() error {
		err := cond()
		if err != nil && alive != nil {
			if gone = alive(); gone != nil {
				cancel()
			}
		}
		return err
	}, testwait.Timeout(limit), testwait.Interval(pollEvery))
	if gone != nil {
		return fmt.Errorf("waiting for %s: %w", what, gone)
	}
	return err
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

// waitWatch lists the objects newList holds, then follows their watch until
// done says the set is complete (done is told the object an event changed,
// or nil after a LIST), for at most limit; alive (optional) fails
// early. A watch rather than a poll: the wait ends when the deciding change
// arrives, not up to a poll interval later, and it costs neither the API
// server nor the machine's two cores a LIST every half second (that LIST of
// every Application or Deployment competed with the system under test).
func waitWatch(ctx context.Context, c client.WithWatch, what string, limit time.Duration, alive func() error,
	newList func() client.ObjectList, opts []client.ListOption, done func(map[types.NamespacedName]client.Object, *types.NamespacedName) (bool, string)) error {
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	check := time.NewTicker(pollEvery)
	defer check.Stop()
	last := "nothing listed yet"
	timedOut := func() error { return fmt.Errorf("timed out after %s waiting for %s: %s", limit, what, last) }
	// Each pass lists and watches; a watch the server ends starts a new pass.
	for pass := 0; pass < 1000; pass++ {
		list := newList()
		if err := c.List(ctx, list, opts...); err != nil {
			last = err.Error()
			select {
			case <-ctx.Done():
				return timedOut()
			case <-time.After(pollEvery):
				continue
			}
		}
		objs := map[types.NamespacedName]client.Object{}
		if err := meta.EachListItem(list, func(o runtime.Object) error {
			obj := o.(client.Object)
			objs[client.ObjectKeyFromObject(obj)] = obj
			return nil
		}); err != nil {
			return err
		}
		ok, state := done(objs, nil)
		if ok {
			return nil
		}
		last = state
		w, err := c.Watch(ctx, newList(), append(opts, &client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: list.GetResourceVersion()}})...)
		if err != nil {
			last = err.Error()
			continue
		}
		if err := follow(ctx, w, check.C, alive, objs, done, &last); err != nil {
			if ctx.Err() != nil {
				return timedOut()
			}
			return fmt.Errorf("waiting for %s (%s): %w", what, last, err)
		}
		if ok, _ := done(objs, nil); ok {
			return nil
		}
	}
	return timedOut()
}

// follow applies w's events to objs until done is satisfied (nil), the watch
// ends (nil: list again), ctx ends or alive fails (an error).
func follow(ctx context.Context, w watch.Interface, check <-chan time.Time, alive func() error,
	objs map[types.NamespacedName]client.Object, done func(map[types.NamespacedName]client.Object, *types.NamespacedName) (bool, string), last *string) error {
	defer w.Stop()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-check:
			if alive != nil {
				if err := alive(); err != nil {
					return err
				}
			}
		case ev, open := <-w.ResultChan():
			if !open || ev.Type == watch.Error {
				return nil
			}
			obj, isObject := ev.Object.(client.Object)
			if !isObject {
				continue
			}
			key := client.ObjectKeyFromObject(obj)
			if ev.Type == watch.Deleted {
				delete(objs, key)
			} else {
				objs[key] = obj
			}
			ok, state := done(objs, &key)
			if ok {
				return nil
			}
			*last = state
		}
	}
}
