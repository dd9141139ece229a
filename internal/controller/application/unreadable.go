package application

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/skiffcd/skiff/api/v1alpha1"
)

const eventReasonStatusRepaired = "StatusRepaired"

// repairStatus rewrites the status of an app whose status had fields of
// the wrong type (someone else wrote them; the CRD does not type the
// status): the whole status is replaced by what could be read, so those
// fields are gone, and the next comparison starts from a readable status.
// A merge patch could not do it: it merges into the stored fields.
func (r *Reconciler) repairStatus(ctx context.Context, app *v1alpha1.Application, fields []string, reason string) (ctrl.Result, error) {
	patch, err := json.Marshal([]map[string]any{
		// The resourceVersion makes the write conditional on the version read.
		{"op": "replace", "path": "/metadata/resourceVersion", "value": app.ResourceVersion},
		{"op": "add", "path": "/status", "value": app.Status},
	})
	if err != nil {
		return ctrl.Result{}, fmt.Errorf("encoding the status repair: %w", err)
	}
	if err := r.Client.Patch(ctx, app, client.RawPatch(types.JSONPatchType, patch)); err != nil {
		if apierrors.IsConflict(err) {
			return ctrl.Result{RequeueAfter: time.Millisecond}, nil // read the newer version
		}
		return ctrl.Result{}, fmt.Errorf("repairing the status: %w", err)
	}
	if r.Recorder != nil {
		r.Recorder.Eventf(app, nil, "Warning", eventReasonStatusRepaired, "Compare",
			"Removed status fields of the wrong type (%s): %s", strings.Join(fields, ", "), reason)
	}
	// The status write does not pass the comparison queue's filter.
	return ctrl.Result{RequeueAfter: time.Millisecond}, nil
}
