package appsetops

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/skiffcd/skiff/api/v1alpha1"
	"github.com/skiffcd/skiff/internal/opserr"
)

// RefreshAnnotation asks the ApplicationSet controller to generate a set
// again at once, asking git for new commits; the controller removes it.
// Argo CD's webhook handler sets it the same way.
const RefreshAnnotation = "argocd.argoproj.io/application-set-refresh"

// Refresh sets RefreshAnnotation on the named set.
func (o Ops) Refresh(ctx context.Context, name string) error {
	patch := []byte(`{"metadata":{"annotations":{"` + RefreshAnnotation + `":"true"}}}`)
	set := &v1alpha1.ApplicationSet{}
	set.Namespace, set.Name = o.Namespace, name
	if err := o.Client.Patch(ctx, set, client.RawPatch(types.MergePatchType, patch)); err != nil {
		return opserr.Classify(fmt.Errorf("refreshing applicationset %s: %w", name, err))
	}
	return nil
}
