package rolloutops

import (
	"context"
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/skiffcd/skiff/api/v1alpha1"
)

// Op names an operation on a Rollout as the API's paths name it.
type Op string

// The operations of the kubectl plugin that change a Rollout.
const (
	// Promote resumes a pause or moves a canary to its next step.
	Promote Op = "promote"
	// PromoteFull skips the remaining steps, pauses and analyses.
	PromoteFull Op = "promote-full"
	// Abort goes back to the stable revision.
	Abort Op = "abort"
	// Retry resumes an aborted update.
	Retry Op = "retry"
	// Pause pauses the Rollout where it is.
	Pause Op = "pause"
	// Restart replaces the pods.
	Restart Op = "restart"
	// SetImage sets container images, which starts a new revision.
	SetImage Op = "set-image"
	// Undo puts back the pod template of an earlier revision.
	Undo Op = "undo"
)

// Ops are all the operations, in the order the API lists them.
var Ops = []Op{Promote, PromoteFull, Abort, Retry, Pause, Restart, SetImage, Undo}

// Request is one operation with its arguments.
type Request struct {
	Op Op
	// Images are what SetImage sets.
	Images []ContainerImage
	// ToRevision is the revision Undo goes back to; 0 is the one before
	// the newest.
	ToRevision int64
}

// Plan is what an operation does to a Rollout: the patches to send, in
// order, or why none is needed.
type Plan struct {
	Patches []Patch
	// Skipped says why an undo sends nothing: the template is already
	// that revision's.
	Skipped string
}

// PlanOf plans req on ro as read; rss are the ReplicaSets ro controls,
// newest first (Undo reads them), and now the time of the request
// (Restart reads it). Errors are ErrInvalid.
func PlanOf(ro *v1alpha1.Rollout, rss []appsv1.ReplicaSet, req Request, now time.Time) (Plan, error) {
	switch req.Op {
	case Promote, PromoteFull:
		return Plan{Patches: PromotePatches(ro, req.Op == PromoteFull)}, nil
	case Abort:
		return Plan{Patches: []Patch{AbortPatch()}}, nil
	case Retry:
		return Plan{Patches: []Patch{RetryPatch()}}, nil
	case Pause:
		return Plan{Patches: []Patch{PausePatch()}}, nil
	case Restart:
		return Plan{Patches: []Patch{RestartPatch(now)}}, nil
	case SetImage:
		p, err := SetImagePatch(ro, req.Images)
		if err != nil {
			return Plan{}, err
		}
		return Plan{Patches: []Patch{p}}, nil
	case Undo:
		p, skipped, err := UndoPatch(ro, rss, req.ToRevision)
		if err != nil || p == nil {
			return Plan{Skipped: skipped}, err
		}
		return Plan{Patches: []Patch{*p}}, nil
	}
	return Plan{}, invalid("unknown rollout operation %q", req.Op)
}

// Runner runs operations on Rollouts.
type Runner struct {
	// Client writes the patches.
	Client client.Client
	// Reader lists the ReplicaSets an undo reads; nil means Client. The
	// API server reads them uncached.
	Reader client.Reader
	// Now stamps restarts; nil means time.Now.
	Now func() time.Time
}

// Result is what an operation did.
type Result struct {
	// Rollout as the last patch left it; as read when none was sent.
	Rollout *v1alpha1.Rollout `json:"rollout"`
	// Skipped says why no patch was sent, when an undo found nothing to do.
	Skipped string `json:"skipped,omitempty"`
}

// Run plans req on ro (as read just before) and sends the patches, status
// patches to the status subresource.
func (r Runner) Run(ctx context.Context, ro *v1alpha1.Rollout, req Request) (*Result, error) {
	var rss []appsv1.ReplicaSet
	if req.Op == Undo {
		reader := r.Reader
		if reader == nil {
			reader = r.Client
		}
		var err error
		if rss, err = ReplicaSetsOf(ctx, reader, ro); err != nil {
			return nil, err
		}
	}
	now := time.Now
	if r.Now != nil {
		now = r.Now
	}
	plan, err := PlanOf(ro, rss, req, now())
	if err != nil {
		return nil, err
	}
	res := &Result{Rollout: ro, Skipped: plan.Skipped}
	for _, p := range plan.Patches {
		obj := &v1alpha1.Rollout{}
		obj.Namespace, obj.Name = ro.Namespace, ro.Name
		raw := client.RawPatch(p.Type, []byte(p.Data))
		if p.Status {
			err = r.Client.Status().Patch(ctx, obj, raw)
		} else {
			err = r.Client.Patch(ctx, obj, raw)
		}
		if err != nil {
			return nil, classifyPatch(p, fmt.Errorf("patching rollout %s with %s: %w", ro.Name, p.Data, err))
		}
		res.Rollout = obj
	}
	return res, nil
}
