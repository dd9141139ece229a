// Package clustercli is `skiff cluster`: the two backends (the API server
// of a session, or the Kubernetes API of a kubeconfig with --core), the
// table and documents it prints, and `add`, which installs argocd-manager
// in the cluster of a kubeconfig context before registering it.
package clustercli

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"text/tabwriter"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/skiffcd/skiff/internal/cli/appcli"
	"github.com/skiffcd/skiff/internal/clusterops"
	"github.com/skiffcd/skiff/internal/clusters"
)

// Backend is where `skiff cluster` reads and writes clusters. Both answer
// with credentials masked.
type Backend interface {
	List(ctx context.Context) (clusterops.List, error)
	Get(ctx context.Context, serverOrName string) (clusterops.Cluster, error)
	Save(ctx context.Context, c clusters.Cluster, upsert bool) (clusterops.Cluster, error)
	Delete(ctx context.Context, serverOrName string, force bool) error
	RotateAuth(ctx context.Context, serverOrName string) (clusterops.Cluster, error)
}

// Kube is the Backend of a kubeconfig: the operations on the cluster
// Secrets of Ops.Namespace.
type Kube struct{ Ops clusterops.Ops }

var _ Backend = Kube{}

func (k Kube) List(ctx context.Context) (clusterops.List, error) { return k.Ops.List(ctx) }
func (k Kube) Get(ctx context.Context, id string) (clusterops.Cluster, error) {
	return k.Ops.Get(ctx, id)
}
func (k Kube) Save(ctx context.Context, c clusters.Cluster, upsert bool) (clusterops.Cluster, error) {
	return k.Ops.Save(ctx, c, upsert)
}
func (k Kube) Delete(ctx context.Context, id string, force bool) error {
	return k.Ops.Delete(ctx, id, force)
}
func (k Kube) RotateAuth(ctx context.Context, id string) (clusterops.Cluster, error) {
	return k.Ops.RotateAuth(ctx, id, clusterops.TokenWait)
}

// API is the Backend of a logged-in session: /api/v1/clusters, which
// checks RBAC (resource clusters).
type API struct{ Client *appcli.API }

var _ Backend = API{}

func clusterPath(id string, parts ...string) string {
	return "/api/v1/clusters/" + strings.Join(append([]string{url.PathEscape(id)}, parts...), "/")
}

func (a API) List(ctx context.Context) (clusterops.List, error) {
	var list clusterops.List
	return list, a.Client.Call(ctx, http.MethodGet, "/api/v1/clusters", nil, &list)
}
func (a API) Get(ctx context.Context, id string) (clusterops.Cluster, error) {
	var c clusterops.Cluster
	return c, a.Client.Call(ctx, http.MethodGet, clusterPath(id), nil, &c)
}
func (a API) Save(ctx context.Context, c clusters.Cluster, upsert bool) (clusterops.Cluster, error) {
	var out clusterops.Cluster
	path := "/api/v1/clusters"
	if upsert {
		path += "?upsert=true"
	}
	return out, a.Client.Call(ctx, http.MethodPost, path, clusterops.Body(c), &out)
}
func (a API) Delete(ctx context.Context, id string, force bool) error {
	path := clusterPath(id)
	if force {
		path += "?force=true"
	}
	return a.Client.Call(ctx, http.MethodDelete, path, nil, nil)
}
func (a API) RotateAuth(ctx context.Context, id string) (clusterops.Cluster, error) {
	var c clusterops.Cluster
	return c, a.Client.Call(ctx, http.MethodPost, clusterPath(id, "rotate-auth"), nil, &c)
}

// WriteList prints clusters as `argocd cluster list` does (SERVER NAME
// VERSION STATUS MESSAGE PROJECT), with the number of apps that target
// each, and after them the cluster Secrets that could not be read.
func WriteList(w, warnings io.Writer, list clusterops.List) error {
	tw := tabwriter.NewWriter(w, 0, 0, 3, ' ', 0)
	fmt.Fprintln(tw, "SERVER\tNAME\tVERSION\tSTATUS\tMESSAGE\tPROJECT\tAPPS")
	for _, c := range list.Items {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%d\n", c.Server, c.Name, c.ServerVersion, c.ConnectionState.Status,
			oneLine(c.ConnectionState.Message), c.Project, len(c.Applications))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, msg := range list.Invalid {
		fmt.Fprintf(warnings, "warning: %s\n", msg)
	}
	return nil
}

// oneLine keeps a message on its table row.
func oneLine(msg string) string {
	return strings.Join(strings.Fields(msg), " ")
}

// AddOptions are `skiff cluster add`'s flags.
type AddOptions struct {
	Name, Project       string
	Namespaces          []string
	ClusterResources    bool
	Upsert              bool
	Labels, Annotations map[string]string
}

// ContextConfig is the client configuration of a kubeconfig context.
func ContextConfig(kubeconfig, contextName string) (*rest.Config, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = kubeconfig
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{CurrentContext: contextName}).ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("kubeconfig context %q: %w", contextName, err)
	}
	return cfg, nil
}

// Add installs argocd-manager in the cluster of target (with the
// context's own credentials) and registers the cluster with its token,
// as `argocd cluster add` does; the cluster is named contextName unless
// opts give a name.
func Add(ctx context.Context, b Backend, target *rest.Config, contextName string, opts AddOptions) (clusterops.Cluster, error) {
	// Refuse before anything is created in the target.
	if server, err := clusterops.Added(target, ""); err != nil {
		return clusterops.Cluster{}, err
	} else if existing, err := b.Get(ctx, server.Server); err == nil && !opts.Upsert {
		return clusterops.Cluster{}, fmt.Errorf("cluster %s exists (as %q): give --upsert to replace it", existing.Server, existing.Name)
	}
	c, err := clusterops.Connect(target, nil)
	if err != nil {
		return clusterops.Cluster{}, err
	}
	token, err := clusterops.InstallManager(ctx, c, opts.Namespaces, clusterops.TokenWait)
	if err != nil {
		return clusterops.Cluster{}, err
	}
	cl, err := clusterops.Added(target, token)
	if err != nil {
		return clusterops.Cluster{}, err
	}
	cl.Name = opts.Name
	if cl.Name == "" {
		cl.Name = contextName
	}
	cl.Project, cl.Namespaces, cl.ClusterResources = opts.Project, opts.Namespaces, opts.ClusterResources
	cl.Labels, cl.Annotations = opts.Labels, opts.Annotations
	return b.Save(ctx, cl, opts.Upsert)
}

// KeyValues reads a repeated key=value flag (--label, --annotation).
func KeyValues(flag string, values []string) (map[string]string, error) {
	if len(values) == 0 {
		return nil, nil
	}
	out := make(map[string]string, len(values))
	for _, v := range values {
		k, val, ok := strings.Cut(v, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("%s %q: want key=value", flag, v)
		}
		out[k] = val
	}
	return out, nil
}
