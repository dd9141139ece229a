package benchkit

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

	"github.com/skiffcd/skiff/internal/testwait"
)

// WaitFor checks cond every every for at most limit; alive (optional)
// ends the wait early, at the first check that finds skiff server gone.
func WaitFor(ctx context.Context, what string, limit, every time.Duration, alive func() error, cond func() error) error {
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
	}, testwait.Timeout(limit), testwait.Interval(every))
	if gone != nil {
		return fmt.Errorf("waiting for %s: %w", what, gone)
	}
	return err
}

// WaitWatch lists the objects newList holds, then follows their watch until
// done says the set is complete (checking alive every every) (done is told the object an event changed,
// or nil after a LIST), for at most limit; alive (optional) fails
// early. A watch rather than a poll: the wait ends when the deciding change
// arrives, not up to a poll interval later, and it costs neither the API
// server nor the machine's two cores a LIST every half second (that LIST of
// every Application or Deployment competed with the system under test).
func WaitWatch(ctx context.Context, c client.WithWatch, what string, limit, every time.Duration, alive func() error,
	newList func() client.ObjectList, opts []client.ListOption, done func(map[types.NamespacedName]client.Object, *types.NamespacedName) (bool, string)) error {
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	check := time.NewTicker(every)
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
			case <-time.After(every):
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
