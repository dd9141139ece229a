package resourceactions

import (
	"context"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/skiffcd/skiff/internal/opserr"
)

// Writer sends the writes of actions.
type Writer struct {
	Client client.Client
	// Now stamps restarts and names Jobs; nil means time.Now.
	Now func() time.Time
}

// Run plans action name with params on obj (as read just before) with
// catalog and sends the writes in order, status patches to the status
// subresource. It returns the objects as written: the patched object, if
// patched, then those created.
func (w Writer) Run(ctx context.Context, catalog Catalog, obj *unstructured.Unstructured, name string, params []Param) ([]*unstructured.Unstructured, error) {
	now := time.Now
	if w.Now != nil {
		now = w.Now
	}
	changes, err := catalog.Plan(obj, name, params, now())
	if err != nil {
		return nil, err
	}
	var patched *unstructured.Unstructured
	var created []*unstructured.Unstructured
	for _, c := range changes {
		if c.Create != nil {
			if err := w.Client.Create(ctx, c.Create); err != nil {
				if apierrors.IsAlreadyExists(err) {
					return nil, opserr.New(opserr.ErrConflict, fmt.Errorf("%s: creating %s %s: %w", name, c.Create.GetKind(), c.Create.GetName(), err))
				}
				return nil, opserr.Classify(fmt.Errorf("%s: creating %s %s: %w", name, c.Create.GetKind(), c.Create.GetName(), err))
			}
			created = append(created, c.Create)
			continue
		}
		target := &unstructured.Unstructured{}
		target.SetGroupVersionKind(obj.GroupVersionKind())
		target.SetNamespace(obj.GetNamespace())
		target.SetName(obj.GetName())
		raw := client.RawPatch(c.Patch.Type, []byte(c.Patch.Data))
		if c.Patch.Status {
			err = w.Client.Status().Patch(ctx, target, raw)
		} else {
			err = w.Client.Patch(ctx, target, raw)
		}
		if err != nil {
			return nil, opserr.Classify(fmt.Errorf("%s: patching %s %s with %s: %w", name, obj.GetKind(), obj.GetName(), c.Patch.Data, err))
		}
		patched = target
	}
	if patched != nil {
		return append([]*unstructured.Unstructured{patched}, created...), nil
	}
	return created, nil
}
