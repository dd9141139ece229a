package appcli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/skiffcd/skiff/api/v1alpha1"
	"github.com/skiffcd/skiff/internal/resourceactions"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// ResourceRef names one live resource of an Application.
type ResourceRef struct {
	Group     string `json:"group"`
	Version   string `json:"version"`
	Kind      string `json:"kind"`
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
}

func (r ResourceRef) String() string {
	return resourceactions.Describe(r.Group, r.Kind, r.Namespace, r.Name)
}

// ResourceFilter selects resources as `argocd app actions` flags do; an
// empty field matches every resource.
type ResourceFilter struct {
	Group, Kind, Name, Namespace string
}

// Matches reports whether r passes the filter.
func (f ResourceFilter) Matches(r ResourceRef) bool {
	return (f.Kind == "" || f.Kind == r.Kind) && (f.Group == "" || f.Group == r.Group) &&
		(f.Name == "" || f.Name == r.Name) && (f.Namespace == "" || f.Namespace == r.Namespace)
}

// ResourceAction is one action of one resource, as `skiff app actions
// list -o json` prints it.
type ResourceAction struct {
	Resource ResourceRef `json:"resource"`
	resourceactions.Action
}

// ListActions lists the actions of the Application's resources the filter
// selects, in the order of its resources.
func ListActions(ctx context.Context, b Backend, app string, f ResourceFilter) ([]ResourceAction, error) {
	resources, err := b.Resources(ctx, app)
	if err != nil {
		return nil, err
	}
	var out []ResourceAction
	for _, r := range resources {
		if !f.Matches(r) {
			continue
		}
		actions, err := b.ResourceActions(ctx, app, r)
		if err != nil {
			return nil, err
		}
		for _, a := range actions {
			out = append(out, ResourceAction{Resource: r, Action: a})
		}
	}
	return out, nil
}

// RunAction runs action on the Application's resources the filter
// selects: one, or with all every one. It returns those it ran on.
func RunAction(ctx context.Context, b Backend, app, action string, f ResourceFilter, params []resourceactions.Param, all bool) ([]ResourceRef, error) {
	if f.Kind == "" {
		return nil, errors.New("--kind is required")
	}
	resources, err := b.Resources(ctx, app)
	if err != nil {
		return nil, err
	}
	var selected []ResourceRef
	for _, r := range resources {
		if f.Matches(r) {
			selected = append(selected, r)
		}
	}
	switch {
	case len(selected) == 0:
		return nil, fmt.Errorf("no resource of application %s matches kind %q, group %q, name %q, namespace %q", app, f.Kind, f.Group, f.Name, f.Namespace)
	case len(selected) > 1 && !all:
		names := make([]string, len(selected))
		for i, r := range selected {
			names[i] = r.String()
		}
		return nil, fmt.Errorf("%d resources match (%s): narrow with --resource-name, --namespace and --group, or give --all to run %s on every one",
			len(selected), strings.Join(names, ", "), action)
	}
	for i, r := range selected {
		if err := b.RunResourceAction(ctx, app, r, action, params); err != nil {
			return selected[:i], fmt.Errorf("running %s on %s: %w", action, r, err)
		}
	}
	return selected, nil
}

// ParseParams reads --param name=value flags.
func ParseParams(flags []string) ([]resourceactions.Param, error) {
	var out []resourceactions.Param
	for _, p := range flags {
		name, value, ok := strings.Cut(p, "=")
		if !ok || name == "" {
			return nil, fmt.Errorf("--param %q: want name=value", p)
		}
		out = append(out, resourceactions.Param{Name: name, Value: value})
	}
	return out, nil
}

// WriteActions prints actions as `argocd app actions list` does.
func WriteActions(w io.Writer, actions []ResourceAction) error {
	tw := newTable(w)
	fmt.Fprintln(tw, "GROUP\tKIND\tNAME\tACTION\tDISABLED")
	for _, a := range actions {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", a.Resource.Group, a.Resource.Kind, a.Resource.Name, a.Name, strconv.FormatBool(a.Disabled))
	}
	return tw.Flush()
}

// resourceQuery is the query of the resource endpoints for r.
func resourceQuery(r ResourceRef) string {
	return url.Values{"group": {r.Group}, "version": {r.Version}, "kind": {r.Kind}, "namespace": {r.Namespace}, "resourceName": {r.Name}}.Encode()
}

// Resources reads the Application's resource tree.
func (a *API) Resources(ctx context.Context, name string) ([]ResourceRef, error) {
	var out struct {
		Nodes []ResourceRef `json:"nodes"`
	}
	if err := a.call(ctx, http.MethodGet, appPath(name, "/resource-tree"), nil, &out); err != nil {
		return nil, wrap(err, "reading the resources of application "+name)
	}
	return out.Nodes, nil
}

// ResourceActions reads GET .../resource/actions.
func (a *API) ResourceActions(ctx context.Context, name string, r ResourceRef) ([]resourceactions.Action, error) {
	var out struct {
		Actions []resourceactions.Action `json:"actions"`
	}
	if err := a.call(ctx, http.MethodGet, appPath(name, "/resource/actions?"+resourceQuery(r)), nil, &out); err != nil {
		return nil, wrap(err, "listing the actions of "+r.String())
	}
	return out.Actions, nil
}

// RunResourceAction sends POST .../resource/actions/v2.
func (a *API) RunResourceAction(ctx context.Context, name string, r ResourceRef, action string, params []resourceactions.Param) error {
	if params == nil {
		params = []resourceactions.Param{}
	}
	body := map[string]any{"name": name, "group": r.Group, "version": r.Version, "kind": r.Kind, "namespace": r.Namespace,
		"resourceName": r.Name, "action": action, "resourceActionParameters": params}
	return a.call(ctx, http.MethodPost, appPath(name, "/resource/actions/v2"), body, nil)
}

// Resources are the Application's managed resources (status.resources);
// --core does not read their children.
func (k *Kube) Resources(ctx context.Context, name string) ([]ResourceRef, error) {
	app, err := k.Get(ctx, name, "")
	if err != nil {
		return nil, err
	}
	out := make([]ResourceRef, 0, len(app.Status.Resources))
	for _, r := range app.Status.Resources {
		out = append(out, ResourceRef{Group: r.Group, Version: r.Version, Kind: r.Kind, Namespace: r.Namespace, Name: r.Name})
	}
	return out, nil
}

// liveTarget is a live object of an Application and the writer of its
// cluster.
type liveTarget struct {
	obj    *unstructured.Unstructured
	writer resourceactions.Writer
}

// live reads the live object of r, one of the Application's managed
// resources, in the Application's cluster.
func (k *Kube) live(ctx context.Context, name string, r ResourceRef) (*liveTarget, error) {
	rend, app, err := k.renderer(ctx, name)
	if err != nil {
		return nil, err
	}
	managed := slices.ContainsFunc(app.Status.Resources, func(s v1alpha1.ResourceStatus) bool {
		return s.Group == r.Group && s.Kind == r.Kind && s.Namespace == r.Namespace && s.Name == r.Name
	})
	if !managed {
		return nil, fmt.Errorf("%s is not a resource of application %s", r, name)
	}
	obj, err := rend.Live(ctx, schema.GroupVersionKind{Group: r.Group, Version: r.Version, Kind: r.Kind}, r.Namespace, r.Name)
	if err != nil {
		return nil, err
	}
	if obj == nil {
		return nil, fmt.Errorf("%s of application %s does not exist", r, name)
	}
	return &liveTarget{obj: obj, writer: resourceactions.Writer{Dynamic: rend.Dynamic, Mapper: rend.Mapper}}, nil
}

// ResourceActions lists the built-in actions of r (argocd-cm's custom
// actions need the API server).
func (k *Kube) ResourceActions(ctx context.Context, name string, r ResourceRef) ([]resourceactions.Action, error) {
	target, err := k.live(ctx, name, r)
	if err != nil {
		return nil, err
	}
	return resourceactions.Catalog{}.List(target.obj)
}

// RunResourceAction runs a built-in action on r with the kubeconfig's
// credentials.
func (k *Kube) RunResourceAction(ctx context.Context, name string, r ResourceRef, action string, params []resourceactions.Param) error {
	target, err := k.live(ctx, name, r)
	if err != nil {
		return err
	}
	_, err = target.writer.Run(ctx, resourceactions.Catalog{}, target.obj, action, params)
	return err
}
