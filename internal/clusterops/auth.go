package clusterops

import (
	"context"
	"fmt"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/skiffcd/skiff/internal/clusters"
	"github.com/skiffcd/skiff/internal/opserr"
)

// TokenWait bounds the wait for a new token Secret's token.
const TokenWait = 30 * time.Second

// Connect returns a client of the target cluster of cfg, knowing scheme's
// kinds (nil: client-go's).
func Connect(cfg *rest.Config, scheme *runtime.Scheme) (client.Client, error) {
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return nil, fmt.Errorf("connecting to %s: %w", cfg.Host, err)
	}
	return c, nil
}

// Added is the cluster `skiff cluster add` registers for the API server
// of cfg (a kubeconfig context): its server and TLS settings, and the
// argocd-manager token instead of the context's own credentials.
func Added(cfg *rest.Config, token string) (clusters.Cluster, error) {
	tlsCfg := rest.CopyConfig(cfg)
	if err := rest.LoadTLSFiles(tlsCfg); err != nil {
		return clusters.Cluster{}, fmt.Errorf("reading the kubeconfig's certificates: %w", err)
	}
	server := strings.TrimRight(cfg.Host, "/")
	if !strings.Contains(server, "://") {
		server = "https://" + server
	}
	return clusters.Cluster{Server: server, Config: clusters.Config{
		BearerToken: token,
		TLSClientConfig: clusters.TLSClientConfig{
			Insecure:   tlsCfg.Insecure,
			ServerName: tlsCfg.ServerName,
			CAData:     tlsCfg.CAData,
		},
	}}, nil
}

// RotateAuth gives the cluster of serverOrName a new argocd-manager token,
// working in the cluster with its stored credentials: a new token Secret,
// the old ones deleted (their tokens stop working), the cluster Secret
// updated.
func (o Ops) RotateAuth(ctx context.Context, serverOrName string, tokenWait time.Duration) (Cluster, error) {
	_, c, err := o.resolve(ctx, serverOrName)
	if err != nil {
		return Cluster{}, err
	}
	if c.SecretName == "" || c.Config.BearerToken == "" {
		return Cluster{}, opserr.Invalid("cluster %q has no bearer token of its own to rotate", c.Name)
	}
	cfg, err := c.RESTConfig(nil)
	if err != nil {
		return Cluster{}, opserr.Invalid("cluster %q: %w", c.Name, err)
	}
	target, err := Connect(cfg, nil)
	if err != nil {
		return Cluster{}, err
	}
	token, err := RotateToken(ctx, target, tokenWait)
	if err != nil {
		return Cluster{}, fmt.Errorf("rotating the token of cluster %q: %w", c.Name, err)
	}
	c.Config.BearerToken = token
	return o.Save(ctx, c, true)
}
