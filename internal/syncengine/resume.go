package syncengine

import (
	"slices"

	"github.com/skiffcd/skiff/api/v1alpha1"
)

// resumedHook returns the result the resumed run recorded for hook t when
// this run takes it over: t completed then, or it started and its object
// is still there. A hook whose object went away is run again.
func (r *run) resumedHook(t Task) (v1alpha1.ResourceResult, bool) {
	if !t.Hook {
		return v1alpha1.ResourceResult{}, false
	}
	res, ok := r.resumed[taskKey(t)]
	switch {
	case !ok:
		return res, false
	case res.HookPhase == v1alpha1.OperationSucceeded, res.HookPhase == v1alpha1.OperationFailed:
		return res, true
	}
	return res, res.HookPhase == v1alpha1.OperationRunning && t.Live != nil
}

// progress gives the results so far to Request.Progress.
func (r *run) progress() {
	if r.req.Progress == nil || r.req.DryRun {
		return
	}
	r.mu.Lock()
	results := slices.Clone(r.results)
	r.mu.Unlock()
	r.sortResults(results)
	r.req.Progress(results)
}
