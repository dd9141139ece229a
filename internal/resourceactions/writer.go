package resourceactions

import (
	"context"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"

	"github.com/skiffcd/skiff/internal/opserr"
)

// Writer sends the writes of actions to the cluster of the objects (an
// Application's destination).
type Writer struct {
	Dynamic dynamic.Interface
	Mapper  meta.RESTMapper
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
			res, err := w.resource(c.Create)
			if err != nil {
				return nil, err
			}
			out, err := res.Create(ctx, c.Create, metav1.CreateOptions{})
			if err != nil {
				err = fmt.Errorf("%s: creating %s %s: %w", name, c.Create.GetKind(), c.Create.GetName(), err)
				if apierrors.IsAlreadyExists(err) {
					return nil, opserr.New(opserr.ErrConflict, err)
				}
				return nil, opserr.Classify(err)
			}
			created = append(created, out)
			continue
		}
		res, err := w.resource(obj)
		if err != nil {
			return nil, err
		}
		var sub []string
		if c.Patch.Status {
			sub = []string{"status"}
		}
		out, err := res.Patch(ctx, obj.GetName(), c.Patch.Type, []byte(c.Patch.Data), metav1.PatchOptions{}, sub...)
		if err != nil {
			return nil, opserr.Classify(fmt.Errorf("%s: patching %s %s with %s: %w", name, obj.GetKind(), obj.GetName(), c.Patch.Data, err))
		}
		patched = out
	}
	if patched != nil {
		return append([]*unstructured.Unstructured{patched}, created...), nil
	}
	return created, nil
}

// resource is the dynamic client of obj's kind and namespace.
func (w Writer) resource(obj *unstructured.Unstructured) (dynamic.ResourceInterface, error) {
	gvk := obj.GroupVersionKind()
	m, err := w.Mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return nil, opserr.Invalid("mapping %s: %w", gvk.Kind, err)
	}
	if m.Scope.Name() == meta.RESTScopeNameNamespace {
		return w.Dynamic.Resource(m.Resource).Namespace(obj.GetNamespace()), nil
	}
	return w.Dynamic.Resource(m.Resource), nil
}
