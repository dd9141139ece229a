package syncengine

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/skiffcd/skiff/api/v1alpha1"
	"github.com/skiffcd/skiff/internal/clustercache"
)

// failedTask is a sync's message when a task's write failed, in Argo CD's
// words.
func failedTask(t Task, err error) string {
	verb := "apply"
	if t.Prune {
		verb = "prune"
	}
	return fmt.Sprintf("one or more objects failed to %s, reason: %s: %v", verb, describe(t), err)
}

func statusFor(t Task) v1alpha1.ResultCode {
	switch {
	case t.PruneSkipped:
		return v1alpha1.ResultCodePruneSkipped
	case t.Prune:
		return v1alpha1.ResultCodePruned
	}
	return v1alpha1.ResultCodeSynced
}

// record sets the result of a task, replacing an earlier one for it.
func (r *run) record(t Task, status v1alpha1.ResultCode, message string, hookPhase v1alpha1.OperationPhase) {
	obj := t.Desired
	if obj == nil {
		obj = t.Live
	}
	res := v1alpha1.ResourceResult{
		Group: t.Key.Group, Version: obj.GroupVersionKind().Version, Kind: t.Key.Kind,
		Namespace: t.Key.Namespace, Name: t.Key.Name,
		Status: status, Message: message, SyncPhase: string(t.Phase), HookPhase: hookPhase,
	}
	if t.Hook {
		res.HookType = string(t.Phase)
		res.SyncPhase = string(t.Phase)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for i, existing := range r.results {
		if keyOf(existing) == keyOf(res) {
			r.results[i] = res
			return
		}
	}
	r.results = append(r.results, res)
}

// resultKey identifies a task's result.
type resultKey struct{ group, kind, namespace, name, hookType string }

func keyOf(res v1alpha1.ResourceResult) resultKey {
	return resultKey{res.Group, res.Kind, res.Namespace, res.Name, res.HookType}
}

func taskKey(t Task) resultKey {
	k := resultKey{group: t.Key.Group, kind: t.Key.Kind, namespace: t.Key.Namespace, name: t.Key.Name}
	if t.Hook {
		k.hookType = string(t.Phase)
	}
	return k
}

// sortResults puts results in plan order, whatever order tasks that ran
// together finished in.
func (r *run) sortResults(results []v1alpha1.ResourceResult) {
	sort.SliceStable(results, func(i, j int) bool {
		return r.order[keyOf(results[i])] < r.order[keyOf(results[j])]
	})
}

func (r *run) setHookPhase(t Task, phase v1alpha1.OperationPhase, message string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	res := r.resultOf(t)
	if res == nil {
		return
	}
	res.HookPhase = phase
	if message != "" {
		res.Message = message
	}
	if phase == v1alpha1.OperationFailed {
		res.Status = v1alpha1.ResultCodeSyncFailed
	}
}

// hookResult returns a copy of hook t's result so far.
func (r *run) hookResult(t Task) v1alpha1.ResourceResult {
	r.mu.Lock()
	defer r.mu.Unlock()
	if res := r.resultOf(t); res != nil {
		return *res
	}
	return v1alpha1.ResourceResult{}
}

func (r *run) hookPhase(t Task) v1alpha1.OperationPhase {
	return r.hookResult(t).HookPhase
}

// resultOf returns t's result in r.results, nil if none; r.mu must be held.
func (r *run) resultOf(t Task) *v1alpha1.ResourceResult {
	key := taskKey(t)
	for i := range r.results {
		if keyOf(r.results[i]) == key {
			return &r.results[i]
		}
	}
	return nil
}

func describe(t Task) string {
	return fmt.Sprintf("%s %s", strings.ToLower(t.Key.Kind), nameOf(t.Key))
}

func nameOf(k clustercache.ResourceKey) string {
	if k.Namespace == "" {
		return k.Name
	}
	return k.Namespace + "/" + k.Name
}

// apiMessage is the API server's message without Go error wrapping.
func apiMessage(err error) string {
	var status apierrors.APIStatus
	if errors.As(err, &status) {
		return status.Status().Message
	}
	return err.Error()
}
