// Package appsetcli is `skiff appset`: the two backends (the API server of
// a session, or the Kubernetes API of a kubeconfig with --core), the
// ApplicationSet files it reads and the tables it prints.
package appsetcli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"text/tabwriter"

	utilyaml "k8s.io/apimachinery/pkg/util/yaml"

	"github.com/skiffcd/skiff/api/v1alpha1"
	"github.com/skiffcd/skiff/internal/appsetops"
	"github.com/skiffcd/skiff/internal/cli/appcli"
)

// Backend is where `skiff appset` reads and writes ApplicationSets.
type Backend interface {
	List(ctx context.Context, selector string, projects []string) ([]v1alpha1.ApplicationSet, error)
	Get(ctx context.Context, name string) (*v1alpha1.ApplicationSet, error)
	Create(ctx context.Context, set *v1alpha1.ApplicationSet, upsert, dryRun bool) (*v1alpha1.ApplicationSet, error)
	Delete(ctx context.Context, name string) error
	Generate(ctx context.Context, set *v1alpha1.ApplicationSet) ([]v1alpha1.Application, error)
}

// Kube is the Backend of a kubeconfig: the operations on the
// ApplicationSets of Ops.Namespace, without RBAC.
type Kube struct{ Ops appsetops.Ops }

var _ Backend = Kube{}

func (k Kube) List(ctx context.Context, selector string, projects []string) ([]v1alpha1.ApplicationSet, error) {
	return k.Ops.List(ctx, selector, projects)
}
func (k Kube) Get(ctx context.Context, name string) (*v1alpha1.ApplicationSet, error) {
	return k.Ops.Get(ctx, name)
}
func (k Kube) Create(ctx context.Context, set *v1alpha1.ApplicationSet, upsert, dryRun bool) (*v1alpha1.ApplicationSet, error) {
	return k.Ops.Create(ctx, set, upsert, dryRun)
}
func (k Kube) Delete(ctx context.Context, name string) error { return k.Ops.Delete(ctx, name) }
func (k Kube) Generate(ctx context.Context, set *v1alpha1.ApplicationSet) ([]v1alpha1.Application, error) {
	return k.Ops.Preview(ctx, set)
}

// API is the Backend of a logged-in session: /api/v1/applicationsets,
// which checks RBAC (resource applicationsets).
type API struct{ Client *appcli.API }

var _ Backend = API{}

const setsPath = "/api/v1/applicationsets"

func (a API) List(ctx context.Context, selector string, projects []string) ([]v1alpha1.ApplicationSet, error) {
	q := url.Values{}
	if selector != "" {
		q.Set("selector", selector)
	}
	for _, p := range projects {
		q.Add("projects", p)
	}
	path := setsPath
	if len(q) > 0 {
		path += "?" + q.Encode()
	}
	var list v1alpha1.ApplicationSetList
	return list.Items, a.Client.Call(ctx, http.MethodGet, path, nil, &list)
}
func (a API) Get(ctx context.Context, name string) (*v1alpha1.ApplicationSet, error) {
	var set v1alpha1.ApplicationSet
	return &set, a.Client.Call(ctx, http.MethodGet, setsPath+"/"+url.PathEscape(name), nil, &set)
}
func (a API) Create(ctx context.Context, set *v1alpha1.ApplicationSet, upsert, dryRun bool) (*v1alpha1.ApplicationSet, error) {
	q := url.Values{}
	if upsert {
		q.Set("upsert", "true")
	}
	if dryRun {
		q.Set("dryRun", "true")
	}
	path := setsPath
	if len(q) > 0 {
		path += "?" + q.Encode()
	}
	var out v1alpha1.ApplicationSet
	return &out, a.Client.Call(ctx, http.MethodPost, path, set, &out)
}
func (a API) Delete(ctx context.Context, name string) error {
	return a.Client.Call(ctx, http.MethodDelete, setsPath+"/"+url.PathEscape(name), nil, nil)
}
func (a API) Generate(ctx context.Context, set *v1alpha1.ApplicationSet) ([]v1alpha1.Application, error) {
	var out struct {
		Applications []v1alpha1.Application `json:"applications"`
	}
	return out.Applications, a.Client.Call(ctx, http.MethodPost, setsPath+"/generate", map[string]any{"applicationSet": set}, &out)
}

// ReadSets reads the ApplicationSets of a YAML or JSON stream (one or more
// documents); any other kind is an error naming it.
func ReadSets(r io.Reader) ([]*v1alpha1.ApplicationSet, error) {
	data, err := io.ReadAll(io.LimitReader(r, 16<<20))
	if err != nil {
		return nil, err
	}
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	var sets []*v1alpha1.ApplicationSet
	for i := 1; ; i++ {
		set := &v1alpha1.ApplicationSet{}
		if err := dec.Decode(set); err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			return nil, fmt.Errorf("document %d: %w", i, err)
		}
		if set.Kind == "" && set.Name == "" {
			continue // an empty document
		}
		if set.Kind != "ApplicationSet" {
			return nil, fmt.Errorf("document %d is a %q, want an ApplicationSet", i, set.Kind)
		}
		sets = append(sets, set)
	}
	if len(sets) == 0 {
		return nil, errors.New("no ApplicationSet in the input")
	}
	return sets, nil
}

// WriteList prints sets as `argocd appset list` does.
func WriteList(w io.Writer, sets []v1alpha1.ApplicationSet) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tPROJECT\tSYNCPOLICY\tCONDITIONS\tREPO\tPATH\tTARGET")
	for _, s := range sets {
		src := s.Spec.Template.Spec.Source
		var repo, path, target string
		if src != nil {
			repo, path, target = src.RepoURL, src.Path, src.TargetRevision
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", s.Name, s.Spec.Template.Spec.Project, syncPolicy(&s),
			conditions(&s), repo, path, target)
	}
	return tw.Flush()
}

func syncPolicy(s *v1alpha1.ApplicationSet) string {
	if s.Spec.SyncPolicy != nil && s.Spec.SyncPolicy.ApplicationsSync != nil {
		return string(*s.Spec.SyncPolicy.ApplicationsSync)
	}
	return "nil"
}

// conditions lists the types of the true conditions, as Argo CD's table.
func conditions(s *v1alpha1.ApplicationSet) string {
	var out []string
	for _, c := range s.Status.Conditions {
		if c.Status == v1alpha1.ApplicationSetConditionStatusTrue {
			out = append(out, string(c.Type))
		}
	}
	return "[" + strings.Join(out, " ") + "]"
}

// WriteApps prints the Applications `skiff appset generate` previews.
func WriteApps(w io.Writer, apps []v1alpha1.Application) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tPROJECT\tREPO\tPATH\tDESTINATION")
	for _, a := range apps {
		var repo, path string
		if src := a.Spec.Source; src != nil {
			repo, path = src.RepoURL, src.Path
		}
		dest := a.Spec.Destination.Server
		if dest == "" {
			dest = a.Spec.Destination.Name
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s/%s\n", a.Name, a.Spec.Project, repo, path, dest, a.Spec.Destination.Namespace)
	}
	return tw.Flush()
}
