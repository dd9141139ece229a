package application

import (
	"context"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/skiffcd/skiff/api/v1alpha1"
	"github.com/skiffcd/skiff/internal/appops"
	"github.com/skiffcd/skiff/internal/clusters"
	"github.com/skiffcd/skiff/internal/project"
)

// project returns the app's AppProject, creating the default project when
// it is missing, as Argo CD does.
func (r *Reconciler) project(ctx context.Context, app *v1alpha1.Application) (*v1alpha1.AppProject, error) {
	name := app.ProjectName()
	proj := &v1alpha1.AppProject{}
	err := r.Client.Get(ctx, client.ObjectKey{Namespace: r.Namespace, Name: name}, proj)
	if apierrors.IsNotFound(err) && name == v1alpha1.DefaultProjectName {
		proj = project.Default(r.Namespace)
		if err := r.Client.Create(ctx, proj); err != nil && !apierrors.IsAlreadyExists(err) {
			return nil, fmt.Errorf("creating the default project: %w", err)
		}
		return proj, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading project %s: %w", name, err)
	}
	return proj, nil
}

// projectViolations lists the desired objects proj does not permit in
// cluster, and those out of the scope of the cluster and of a namespaced
// install (managed, see scopeOf).
func projectViolations(proj *v1alpha1.AppProject, app *v1alpha1.Application, desired []*unstructured.Unstructured, cluster clusters.Cluster, managed string) string {
	var msgs []string
	in := scopeOf(managed, cluster)
	for _, obj := range desired {
		if msg := objectOutOfScope(in, obj); msg != "" {
			msgs = append(msgs, msg)
			continue
		}
		gvk := obj.GroupVersionKind()
		namespaced := obj.GetNamespace() != ""
		if err := project.CheckResource(proj, gvk.Group, gvk.Kind, namespaced); err != nil {
			msgs = append(msgs, err.Error())
			continue
		}
		if namespaced && obj.GetNamespace() != app.Spec.Destination.Namespace {
			if err := appops.CheckDestinationNamespace(proj, app.Spec.Destination, cluster, obj.GetNamespace()); err != nil {
				msgs = append(msgs, fmt.Sprintf("%s %s/%s: %v", gvk.Kind, obj.GetNamespace(), obj.GetName(), err))
			}
		}
	}
	return strings.Join(msgs, "; ")
}

// canSync applies the project's sync windows, which name clusters by name.
func (r *Reconciler) canSync(ctx context.Context, app *v1alpha1.Application, cluster clusters.Cluster) (bool, string) {
	proj, err := r.project(ctx, app)
	if err != nil {
		return false, err.Error()
	}
	manual := app.Operation != nil && !app.Operation.InitiatedBy.Automated
	return project.CanSync(proj, r.now(), app.Name, app.Spec.Destination.Namespace, cluster.Name, manual)
}
