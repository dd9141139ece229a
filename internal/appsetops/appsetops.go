// Package appsetops is what can be done to ApplicationSets, the same under
// the API server and `skiff appset --core`: list, get, create (or
// replace), delete, and preview the Applications a set generates. Like
// appops it uses no HTTP, no flags and no controller; its errors carry a
// kind from internal/opserr.
package appsetops

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/skiffcd/skiff/api/v1alpha1"
	"github.com/skiffcd/skiff/internal/opserr"
)

// AnyProject is the project RBAC checks a set whose template's project is
// itself a template: the set may make apps in any project, so only a
// subject allowed on every project may act on it.
const AnyProject = "*"

// Generator renders the Applications a set makes now, without writing
// them (the ApplicationSet controller's generators and templates).
type Generator func(ctx context.Context, set *v1alpha1.ApplicationSet) ([]v1alpha1.Application, error)

// Ops acts on the ApplicationSets of Namespace through Client.
type Ops struct {
	Client    client.Client
	Namespace string
	// Generate previews a set's Applications; nil when this face cannot
	// (Generate then answers an invalid-request error).
	Generate Generator
}

// Project is the project a set's Applications go to, which RBAC checks the
// set by; AnyProject when the template computes it.
func Project(set *v1alpha1.ApplicationSet) string {
	p := set.Spec.Template.Spec.Project
	switch {
	case strings.Contains(p, "{{"):
		return AnyProject
	case p == "":
		return "default"
	}
	return p
}

// RBACObject is the object of an RBAC check on set, as Argo CD forms it:
// <project>/<name>.
func RBACObject(set *v1alpha1.ApplicationSet) string {
	return Project(set) + "/" + set.Name
}

// List returns the sets matching selector (a label selector, "" for all)
// and, when projects is not empty, whose project is one of them; sorted by
// name.
func (o Ops) List(ctx context.Context, selector string, projects []string) ([]v1alpha1.ApplicationSet, error) {
	sel, err := labels.Parse(selector)
	if err != nil {
		return nil, opserr.Invalid("invalid selector %q: %w", selector, err)
	}
	var list v1alpha1.ApplicationSetList
	if err := o.Client.List(ctx, &list, client.InNamespace(o.Namespace), client.MatchingLabelsSelector{Selector: sel}); err != nil {
		return nil, fmt.Errorf("listing ApplicationSets: %w", err)
	}
	out := make([]v1alpha1.ApplicationSet, 0, len(list.Items))
	for _, set := range list.Items {
		if len(projects) == 0 || slices.Contains(projects, Project(&set)) {
			out = append(out, set)
		}
	}
	slices.SortFunc(out, func(a, b v1alpha1.ApplicationSet) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// Get reads the named set.
func (o Ops) Get(ctx context.Context, name string) (*v1alpha1.ApplicationSet, error) {
	if err := checkName(name); err != nil {
		return nil, err
	}
	set := &v1alpha1.ApplicationSet{}
	if err := o.Client.Get(ctx, client.ObjectKey{Namespace: o.Namespace, Name: name}, set); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, opserr.New(opserr.ErrNotFound, fmt.Errorf("applicationset %s not found", name))
		}
		return nil, fmt.Errorf("reading applicationset %s: %w", name, err)
	}
	return set, nil
}

// Validate checks what the API server's schema does not: a name, a
// namespace that is Ops', at least one generator, a template or a
// per-generator one.
func (o Ops) Validate(set *v1alpha1.ApplicationSet) error {
	if err := checkName(set.Name); err != nil {
		return err
	}
	if set.Namespace != "" && set.Namespace != o.Namespace {
		return opserr.Invalid("applicationset %s is in namespace %s: Skiff's ApplicationSets live in %s", set.Name, set.Namespace, o.Namespace)
	}
	if len(set.Spec.Generators) == 0 {
		return opserr.Invalid("applicationset %s has no generators", set.Name)
	}
	return nil
}

func checkName(name string) error {
	if name == "" {
		return opserr.Invalid("an applicationset needs a name")
	}
	if errs := validation.IsDNS1123Subdomain(name); len(errs) > 0 {
		return opserr.Invalid("invalid applicationset name %q: %s", name, strings.Join(errs, "; "))
	}
	return nil
}

// Create writes set; with upsert an existing set of its name gets set's
// spec, labels and annotations (its status stays); with dryRun nothing is
// written and the set is returned as it would be.
func (o Ops) Create(ctx context.Context, set *v1alpha1.ApplicationSet, upsert, dryRun bool) (*v1alpha1.ApplicationSet, error) {
	if err := o.Validate(set); err != nil {
		return nil, err
	}
	set = set.DeepCopy()
	set.Namespace = o.Namespace
	// Server-owned fields are not the caller's to set.
	set.ResourceVersion, set.UID, set.Status = "", "", v1alpha1.ApplicationSetStatus{}
	set.CreationTimestamp, set.DeletionTimestamp, set.ManagedFields = metav1.Time{}, nil, nil
	var opts []client.CreateOption
	if dryRun {
		opts = append(opts, client.DryRunAll)
	}
	err := o.Client.Create(ctx, set, opts...)
	if err == nil {
		return set, nil
	}
	if !apierrors.IsAlreadyExists(err) {
		return nil, opserr.Classify(fmt.Errorf("creating applicationset %s: %w", set.Name, err))
	}
	if !upsert {
		return nil, opserr.New(opserr.ErrConflict, fmt.Errorf("applicationset %s already exists: use upsert to replace it", set.Name))
	}
	existing, err := o.Get(ctx, set.Name)
	if err != nil {
		return nil, err
	}
	existing.Spec, existing.Labels, existing.Annotations = set.Spec, set.Labels, set.Annotations
	var updateOpts []client.UpdateOption
	if dryRun {
		updateOpts = append(updateOpts, client.DryRunAll)
	}
	if err := o.Client.Update(ctx, existing, updateOpts...); err != nil {
		return nil, opserr.Classify(fmt.Errorf("replacing applicationset %s: %w", set.Name, err))
	}
	return existing, nil
}

// Delete deletes the named set; the controller's owner references take its
// Applications with it unless the set preserves them.
func (o Ops) Delete(ctx context.Context, name string) error {
	set, err := o.Get(ctx, name)
	if err != nil {
		return err
	}
	if err := o.Client.Delete(ctx, set, client.Preconditions{UID: &set.UID}); err != nil {
		return opserr.Classify(fmt.Errorf("deleting applicationset %s: %w", name, err))
	}
	return nil
}

// Preview renders the Applications set makes now, as `argocd appset
// generate` prints them; nothing is written.
func (o Ops) Preview(ctx context.Context, set *v1alpha1.ApplicationSet) ([]v1alpha1.Application, error) {
	if err := o.Validate(set); err != nil {
		return nil, err
	}
	if o.Generate == nil {
		return nil, opserr.Invalid("generating applications is not available here")
	}
	set = set.DeepCopy()
	set.Namespace = o.Namespace
	apps, err := o.Generate(ctx, set)
	if err != nil {
		var kinded *opserr.Error
		if errors.As(err, &kinded) {
			return nil, err
		}
		return nil, opserr.Invalid("applicationset %s: %w", set.Name, err)
	}
	return apps, nil
}
