package clusters

import (
	"fmt"
	"log/slog"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/rest"

	"github.com/skiffcd/skiff/api/v1alpha1"
	"github.com/skiffcd/skiff/internal/opserr"
)

// Cluster is one destination cluster: a cluster Secret, parsed, or the
// implicit in-cluster one.
type Cluster struct {
	Name, Server string
	// Namespaces the cluster may be managed in; empty: all namespaces.
	Namespaces []string
	// ClusterResources says, with Namespaces set, whether cluster-scoped
	// kinds may be managed.
	ClusterResources bool
	// Project makes the cluster project-scoped when set.
	Project string
	// Shard is Argo CD's shard key, nil when the Secret has none.
	Shard *int
	// Labels and Annotations are the Secret's own, kept as they are.
	Labels, Annotations map[string]string
	// Config is Argo CD's `config` JSON.
	Config Config
	// SecretName is the Secret the cluster was read from; empty for the
	// implicit in-cluster entry.
	SecretName string
}

// Registry is the set of clusters Skiff knows, kept current.
type Registry interface {
	// Resolve finds the cluster an Application destination names (by
	// server, else by name). Its error wraps ErrNotFound when none does.
	Resolve(dest v1alpha1.ApplicationDestination) (Cluster, error)
	// List returns every cluster, the in-cluster one included when enabled.
	List() []Cluster
	// Subscribe calls fn after any cluster Secret changed (added, updated,
	// deleted).
	Subscribe(fn func())
}

// ErrNotFound is the kind of the error of a destination no cluster matches.
var ErrNotFound = opserr.ErrNotFound

// Argo CD's names.
const (
	// SecretTypeLabel marks Argo CD's typed Secrets; cluster Secrets carry
	// SecretTypeCluster.
	SecretTypeLabel   = "argocd.argoproj.io/secret-type"
	SecretTypeCluster = "cluster"
	// InClusterServer and InClusterName name the cluster Skiff runs in.
	InClusterServer = "https://kubernetes.default.svc"
	InClusterName   = "in-cluster"
)

// InCluster is the implicit local cluster.
func InCluster() Cluster {
	return Cluster{Name: InClusterName, Server: InClusterServer}
}

// IsInCluster says whether the cluster is the one Skiff runs in: its
// server is the in-cluster address and its Secret, if any, gives no
// credentials of its own (Argo CD then uses the pod's).
func (c Cluster) IsInCluster() bool {
	return c.Server == InClusterServer && !c.Config.hasCredentials()
}

// Public is the cluster without credentials, for answers and logs.
func (c Cluster) Public() Cluster {
	c.Config = c.Config.Public()
	return c
}

// LogValue implements slog.LogValuer: a cluster is logged by name and server.
func (c Cluster) LogValue() slog.Value {
	return slog.GroupValue(slog.String("name", c.Name), slog.String("server", c.Server))
}

// String names the cluster without its credentials.
func (c Cluster) String() string { return fmt.Sprintf("%s (%s)", c.Name, c.Server) }

// RESTConfig is the client configuration that reaches the cluster. base is
// the configuration Skiff itself runs with, used for the in-cluster
// cluster.
func (c Cluster) RESTConfig(base *rest.Config) (*rest.Config, error) {
	if c.IsInCluster() {
		if base == nil {
			return nil, fmt.Errorf("cluster %s: no in-cluster configuration", c.Name)
		}
		return rest.CopyConfig(base), nil
	}
	return c.Config.restConfig(c.Server)
}

// FromSecret reads a cluster Secret; errors name the Secret and the key,
// never a value of config.
func FromSecret(s *corev1.Secret) (Cluster, error) { return fromSecret(s) }
