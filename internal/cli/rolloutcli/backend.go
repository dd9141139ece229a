package rolloutcli

import (
	"context"
	"fmt"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/skiffcd/skiff/api/v1alpha1"
	"github.com/skiffcd/skiff/internal/rolloutops"
)

// Backend is where `skiff rollout` reads and changes Rollouts: the cluster
// of a kubeconfig (Kube).
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
