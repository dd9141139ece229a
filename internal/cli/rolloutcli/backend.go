package rolloutcli

import (
	"context"
	"fmt"
	"net/http"
	"net/url"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/skiffcd/skiff/api/v1alpha1"
	"github.com/skiffcd/skiff/internal/cli/appcli"
	"github.com/skiffcd/skiff/internal/rolloutops"
)

// Backend is where `skiff rollout` reads and changes Rollouts: the cluster
// of a kubeconfig (Kube, `--core`) or Skiff's API server after `skiff
// login` (API), which checks RBAC itself. Both answer with the same
// objects, so the commands print the same either way.
type Backend interface {
	// List returns the Rollouts of namespace (that the caller may see).
	List(ctx context.Context, namespace string) ([]v1alpha1.Rollout, error)
	// Load reads a Rollout with the ReplicaSets, pods and AnalysisRuns it
	// controls.
	Load(ctx context.Context, key client.ObjectKey) (*rolloutops.Info, error)
	// Run runs req on the Rollout key as it is now.
	Run(ctx context.Context, key client.ObjectKey, req rolloutops.Request) (*rolloutops.Result, error)
}

// Kube is the Backend of a kubeconfig.
type Kube struct {
	Client client.Client
}

var _ Backend = (*Kube)(nil)

// List lists the Rollouts of namespace.
func (k *Kube) List(ctx context.Context, namespace string) ([]v1alpha1.Rollout, error) {
	var list v1alpha1.RolloutList
	if err := k.Client.List(ctx, &list, client.InNamespace(namespace)); err != nil {
		return nil, fmt.Errorf("listing rollouts in %s: %w", namespace, err)
	}
	return list.Items, nil
}

// Load reads the Rollout and what it controls.
func (k *Kube) Load(ctx context.Context, key client.ObjectKey) (*rolloutops.Info, error) {
	return rolloutops.Load(ctx, k.Client, key)
}

// Run reads the Rollout and runs req on it.
func (k *Kube) Run(ctx context.Context, key client.ObjectKey, req rolloutops.Request) (*rolloutops.Result, error) {
	ro, err := rolloutops.Get(ctx, k.Client, key)
	if err != nil {
		return nil, err
	}
	return rolloutops.Runner{Client: k.Client}.Run(ctx, ro, req)
}

// API is the Backend of a logged-in session: the API server's
// /api/v1/rollouts, which runs the same operations after checking RBAC.
type API struct {
	Client *appcli.API
}

var _ Backend = (*API)(nil)

func rolloutPath(key client.ObjectKey, parts ...string) string {
	path := "/api/v1/rollouts/" + url.PathEscape(key.Namespace) + "/" + url.PathEscape(key.Name)
	for _, p := range parts {
		path += "/" + url.PathEscape(p)
	}
	return path
}

// List reads GET /api/v1/rollouts?namespace=.
func (a *API) List(ctx context.Context, namespace string) ([]v1alpha1.Rollout, error) {
	var list v1alpha1.RolloutList
	if err := a.Client.Call(ctx, http.MethodGet, "/api/v1/rollouts?"+url.Values{"namespace": {namespace}}.Encode(), nil, &list); err != nil {
		return nil, err
	}
	return list.Items, nil
}

// Load reads GET /api/v1/rollouts/{namespace}/{name}.
func (a *API) Load(ctx context.Context, key client.ObjectKey) (*rolloutops.Info, error) {
	info := &rolloutops.Info{}
	if err := a.Client.Call(ctx, http.MethodGet, rolloutPath(key), nil, info); err != nil {
		return nil, err
	}
	return info, nil
}

// Run posts to /api/v1/rollouts/{namespace}/{name}/{op}.
func (a *API) Run(ctx context.Context, key client.ObjectKey, req rolloutops.Request) (*rolloutops.Result, error) {
	path := rolloutPath(key, string(req.Op))
	var body any
	switch req.Op {
	case rolloutops.SetImage:
		images := map[string]string{}
		for _, ci := range req.Images {
			images[ci.Container] = ci.Image
		}
		body = map[string]any{"images": images}
	case rolloutops.Undo:
		body = map[string]any{"toRevision": req.ToRevision}
		res := &rolloutops.Result{}
		if err := a.Client.Call(ctx, http.MethodPost, path, body, res); err != nil {
			return nil, err
		}
		return res, nil
	}
	ro := &v1alpha1.Rollout{}
	if err := a.Client.Call(ctx, http.MethodPost, path, body, ro); err != nil {
		return nil, err
	}
	return &rolloutops.Result{Rollout: ro}, nil
}
