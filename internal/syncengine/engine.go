package syncengine

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/skiffcd/skiff/api/v1alpha1"
	"github.com/skiffcd/skiff/internal/clustercache"
	"github.com/skiffcd/skiff/internal/diff"
	"github.com/skiffcd/skiff/internal/health"
)

// FieldManager owns the fields Skiff applies; the diff compares the same
// manager's fields.
const FieldManager = diff.FieldManager

// HealthFunc judges a live object (internal/health.Assess in production).
type HealthFunc func(*unstructured.Unstructured) (v1alpha1.HealthStatusCode, string)

// Engine runs plans against the API server.
type Engine struct {
	// Client reads and writes objects; its RESTMapper must discover kinds
	// lazily, so that objects of a CRD created in an earlier wave apply.
	Client client.Client
	// Health judges objects between waves and hooks for completion.
	Health HealthFunc
	// Awaited reports whether a wave waits for an object it applied to be
	// healthy; nil means health.Awaited without argocd-cm's health
	// scripts: not for objects annotated ignore-healthcheck nor for child
	// Applications.
	Awaited func(*unstructured.Unstructured) bool
	// Poll is how often health is re-read while waiting; default 250 ms.
	Poll time.Duration
	// WaveTimeout bounds the wait for one wave or hook; default 5 minutes.
	WaveTimeout time.Duration
}

// Request is one sync of one application.
type Request struct {
	// App names the application; applied objects are tracked to it.
	App string
	// Tracking is how applied objects are marked as App's (argocd-cm's
	// tracking method and instance label); zero means the annotation.
	Tracking clustercache.Tracking
	// Namespace is the destination namespace (created with CreateNamespace=true).
	Namespace string
	Plan      *Plan
	// Options are the application's sync options (for CreateNamespace).
	Options Options
	// NamespaceExists says the destination namespace is known to exist (from
	// a watch cache), so CreateNamespace needs no API call.
	NamespaceExists bool
	// DryRun validates and reports without changing anything.
	DryRun bool
	// IsModified, when set, lets ApplyOutOfSyncOnly skip unchanged objects.
	IsModified func(desired, live *unstructured.Unstructured) bool
	// IgnoreDifferences are the app's rules, whose fields an object with
	// the RespectIgnoreDifferences option applies as they are live.
	IgnoreDifferences []v1alpha1.ResourceIgnoreDifferences
	// Resumed holds the results an earlier run of the same operation
	// recorded before it was interrupted (a controller restart): a hook it
	// completed is not run again, and one it started and that still exists
	// is waited for rather than re-created.
	Resumed []v1alpha1.ResourceResult
	// PruneApproved says the app's deletion approval covers this
	// operation: without it a prune of an object with Prune=confirm stops
	// the sync, Running, before that prune's wave (Result.Phase Running).
	PruneApproved bool
	// Progress, when set, is given the results so far each time hooks have
	// been created and each time they have completed, in plan order, for
	// the caller to record what Resumed needs. A sync without hooks never
	// calls it.
	Progress func([]v1alpha1.ResourceResult)
}

// Result is the outcome of a sync.
type Result struct {
	Phase     v1alpha1.OperationPhase
	Message   string
	Resources []v1alpha1.ResourceResult
	// Applied holds each object (hooks aside) as the API server returned it
	// from this sync's write: the live state right after the sync, before
	// any watch cache has seen it.
	Applied map[clustercache.ResourceKey]*unstructured.Unstructured
	// Pruned says the sync deleted objects.
	Pruned bool
}

// Run executes the plan. Errors of individual objects are results, not
// returned errors: a failed sync is a Result with phase Failed.
func (e *Engine) Run(ctx context.Context, req Request) Result {
	run := &run{Engine: e, req: req}
	res := run.execute(ctx)
	run.sortResults(res.Resources)
	run.mu.Lock()
	res.Applied, res.Pruned = run.applied, run.pruned
	run.mu.Unlock()
	return res
}

// maxInFlight bounds the API calls one sync makes at once: the objects of a
// wave are independent of each other, so they are validated and applied
// together rather than one round trip after another.
const maxInFlight = 8

type run struct {
	*Engine
	req Request
	// mu guards results, which tasks running together record into.
	mu      sync.Mutex
	results []v1alpha1.ResourceResult
	// order is each task's place in the plan; results are reported in it.
	order map[resultKey]int
	// crdKinds are "group/Kind" of CRDs this sync applies: objects of those
	// kinds wait for the API server to serve them.
	crdKinds map[string]bool
	// unmodified memoizes unchanged, by task (guarded by mu).
	unmodified map[resultKey]bool
	// applied and pruned feed Result.Applied and Result.Pruned (guarded by mu).
	applied map[clustercache.ResourceKey]*unstructured.Unstructured
	pruned  bool
	// resumed are the hook results of Request.Resumed, by task.
	resumed map[resultKey]v1alpha1.ResourceResult
}

func (r *run) execute(ctx context.Context) Result {
	tasks := r.prepare()
	r.resumed = map[resultKey]v1alpha1.ResourceResult{}
	for _, res := range r.req.Resumed {
		if res.HookType != "" {
			r.resumed[keyOf(res)] = res
		}
	}
	if failed := r.failShared(tasks); failed > 0 {
		return Result{Phase: v1alpha1.OperationFailed, Resources: r.results,
			Message: fmt.Sprintf("%d of %d objects are managed by another application (FailOnSharedResource=true); nothing was applied", failed, countApplies(tasks))}
	}
	if failed := r.validate(ctx, tasks); failed > 0 {
		return Result{Phase: v1alpha1.OperationFailed, Resources: r.results,
			Message: fmt.Sprintf("%d of %d objects failed validation (server-side dry run); nothing was applied", failed, countApplies(tasks))}
	}
	if r.req.DryRun {
		for _, t := range tasks {
			r.record(t, statusFor(t), "dry run", "")
		}
		return Result{Phase: v1alpha1.OperationSucceeded, Message: "dry run succeeded", Resources: r.results}
	}
	if r.req.Options.CreateNamespace && r.req.Namespace != "" && !r.req.NamespaceExists {
		if err := r.ensureNamespace(ctx); err != nil {
			return Result{Phase: v1alpha1.OperationFailed, Message: err.Error(), Resources: r.results}
		}
	}

	groups := groupTasks(tasks)
	var hooksDone []Task
	for i, group := range groups {
		if group[0].Phase == PhaseSyncFail {
			break // only on failure
		}
		if unconfirmed := r.unconfirmedPrunes(group); len(unconfirmed) > 0 {
			return Result{Phase: v1alpha1.OperationRunning, Resources: r.results,
				Message: MessagePruneConfirmation + " of " + AndMore(unconfirmed)}
		}
		first, rest := prerequisitesFirst(group)
		for _, t := range first {
			if err := r.do(ctx, t); err != nil {
				return r.fail(ctx, groups, hooksDone, failedTask(t, err))
			}
		}
		for j, err := range concurrently(rest, func(t Task) error { return r.do(ctx, t) }) {
			if err != nil {
				return r.fail(ctx, groups, hooksDone, failedTask(rest[j], err))
			}
		}
		hooks := slices.ContainsFunc(group, func(t Task) bool { return t.Hook })
		if hooks {
			r.progress() // created: a restart waits for them instead of re-creating them
		}
		var applied []Task
		for _, t := range group {
			if !t.Prune && !t.PruneSkipped {
				applied = append(applied, t)
			}
		}
		last := i == len(groups)-1 || groups[i+1][0].Phase == PhaseSyncFail
		for _, t := range applied {
			if !t.Hook && (last || !r.awaited(t.Desired)) {
				continue // nothing waits on the last wave
			}
			if t.Hook {
				if res := r.hookResult(t); res.HookPhase != v1alpha1.OperationRunning {
					// Completed by the run this one resumes.
					hooksDone = append(hooksDone, t)
					if res.HookPhase == v1alpha1.OperationFailed {
						return r.fail(ctx, groups, hooksDone, fmt.Sprintf("%s: %s", describe(t), res.Message))
					}
					continue
				}
			}
			if err := r.waitFor(ctx, t); err != nil {
				if t.Hook {
					r.setHookPhase(t, v1alpha1.OperationFailed, err.Error())
					hooksDone = append(hooksDone, t)
				}
				return r.fail(ctx, groups, hooksDone, fmt.Sprintf("%s: %v", describe(t), err))
			}
			if t.Hook {
				r.setHookPhase(t, v1alpha1.OperationSucceeded, "")
				hooksDone = append(hooksDone, t)
			}
		}
		if hooks {
			r.progress() // completed: a restart does not run them again
		}
	}
	r.cleanHooks(ctx, hooksDone)
	return Result{Phase: v1alpha1.OperationSucceeded, Message: "successfully synced (all tasks run)", Resources: r.results}
}

// MessagePruneConfirmation begins the message of a sync held before a
// prune that waits for the app's deletion approval, as Argo CD's.
const MessagePruneConfirmation = "waiting for pruning confirmation"

// unconfirmedPrunes names the prunes of group that wait for the app's
// deletion approval (Prune=confirm), as Argo CD names them:
// apiVersion/Kind/name.
func (r *run) unconfirmedPrunes(group []Task) []string {
	if r.req.PruneApproved {
		return nil
	}
	var out []string
	for _, t := range group {
		if t.Prune && t.Options.PruneConfirm {
			out = append(out, ConfirmationName(t.Live))
		}
	}
	return out
}

// ConfirmationName names obj in the messages of prunes and deletions that
// wait for a confirmation, as Argo CD does: apiVersion/Kind/name.
func ConfirmationName(obj *unstructured.Unstructured) string {
	return obj.GetAPIVersion() + "/" + obj.GetKind() + "/" + obj.GetName()
}

// AndMore is the first of names, and how many more there are, as Argo
// CD's confirmation messages list them.
func AndMore(names []string) string {
	if len(names) == 1 {
		return names[0]
	}
	return fmt.Sprintf("%s and %d more resources", names[0], len(names)-1)
}

// prepare copies desired objects and marks them as the app's.
func (r *run) prepare() []Task {
	tasks := make([]Task, len(r.req.Plan.Tasks))
	r.crdKinds = map[string]bool{}
	r.order = map[resultKey]int{}
	defer func() {
		for i, t := range tasks {
			r.order[taskKey(t)] = i
		}
	}()
	for i, t := range r.req.Plan.Tasks {
		if t.Desired != nil {
			obj := t.Desired.DeepCopy()
			if namespaced, err := r.Client.IsObjectNamespaced(obj); err == nil && !namespaced {
				// A namespace given to a cluster-scoped object (defaulted from
				// the destination) means nothing; the API would refuse it.
				obj.SetNamespace("")
				t.Key.Namespace = ""
			}
			if t.Key.Kind == "CustomResourceDefinition" {
				group, _, _ := unstructured.NestedString(obj.Object, "spec", "group")
				kind, _, _ := unstructured.NestedString(obj.Object, "spec", "names", "kind")
				r.crdKinds[group+"/"+kind] = true
			}
			clustercache.Track(obj, r.req.App, r.req.Tracking)
			t.Desired = obj
		}
		tasks[i] = t
	}
	return tasks
}

// concurrently runs fn for every task, maxInFlight at a time, and returns
// each task's error in task order.
func concurrently(tasks []Task, fn func(Task) error) []error {
	errs := make([]error, len(tasks))
	slots := make(chan struct{}, maxInFlight)
	var wg sync.WaitGroup
	for i, t := range tasks {
		slots <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-slots; wg.Done() }()
			errs[i] = fn(t)
		}()
	}
	wg.Wait()
	return errs
}

// prerequisitesFirst splits a group into the Namespaces and CRDs that other
// objects of the same wave may need, applied first and one by one, and the
// rest, applied together.
func prerequisitesFirst(group []Task) (first, rest []Task) {
	for _, t := range group {
		if !t.Prune && (t.Key.Kind == "Namespace" || t.Key.Kind == "CustomResourceDefinition") {
			first = append(first, t)
			continue
		}
		rest = append(rest, t)
	}
	return first, rest
}

// groupTasks splits ordered tasks into groups that run together: same
// phase, same wave, applies apart from prunes.
func groupTasks(tasks []Task) [][]Task {
	var groups [][]Task
	for _, t := range tasks {
		if n := len(groups); n > 0 {
			prev := groups[n-1][0]
			if prev.Phase == t.Phase && prev.Wave == t.Wave && pruneRank(prev) == pruneRank(t) {
				groups[n-1] = append(groups[n-1], t)
				continue
			}
		}
		groups = append(groups, []Task{t})
	}
	return groups
}

// waitFor waits until an applied object is healthy (or suspended), or a
// hook has completed. Degraded fails the sync.
func (r *run) waitFor(ctx context.Context, t Task) error {
	var lastStatus v1alpha1.HealthStatusCode
	var lastMessage string
	key := client.ObjectKeyFromObject(t.Desired)
	err := wait.PollUntilContextTimeout(ctx, r.poll(), r.timeout(), true, func(ctx context.Context) (bool, error) {
		live := &unstructured.Unstructured{}
		live.SetGroupVersionKind(t.Desired.GroupVersionKind())
		if err := r.Client.Get(ctx, key, live); err != nil {
			if apierrors.IsNotFound(err) && t.Hook {
				return false, errors.New("hook was deleted before it completed")
			}
			return false, client.IgnoreNotFound(err)
		}
		lastStatus, lastMessage = r.Health(live)
		switch lastStatus {
		case v1alpha1.HealthStatusHealthy:
			return true, nil
		case v1alpha1.HealthStatusSuspended:
			return !t.Hook, nil
		case v1alpha1.HealthStatusDegraded:
			return false, fmt.Errorf("degraded: %s", lastMessage)
		}
		return false, nil
	})
	if wait.Interrupted(err) {
		return fmt.Errorf("not healthy after %s (%s: %s)", r.timeout(), lastStatus, lastMessage)
	}
	return err
}

// fail runs the SyncFail hooks and returns a failed result.
func (r *run) fail(ctx context.Context, groups [][]Task, hooksDone []Task, message string) Result {
	for _, group := range groups {
		if group[0].Phase != PhaseSyncFail {
			continue
		}
		for _, t := range group {
			if err := r.do(ctx, t); err != nil {
				continue // reported in its result; the sync has failed already
			}
			if err := r.waitFor(ctx, t); err != nil {
				r.setHookPhase(t, v1alpha1.OperationFailed, err.Error())
			} else {
				r.setHookPhase(t, v1alpha1.OperationSucceeded, "")
			}
			hooksDone = append(hooksDone, t)
		}
	}
	r.cleanHooks(ctx, hooksDone)
	return Result{Phase: v1alpha1.OperationFailed, Message: message, Resources: r.results}
}

func (r *run) awaited(obj *unstructured.Unstructured) bool {
	if r.Awaited != nil {
		return r.Awaited(obj)
	}
	return health.Awaited(obj, false)
}

func (r *run) poll() time.Duration {
	if r.Poll > 0 {
		return r.Poll
	}
	return 250 * time.Millisecond
}

func (r *run) timeout() time.Duration {
	if r.WaveTimeout > 0 {
		return r.WaveTimeout
	}
	return 5 * time.Minute
}
