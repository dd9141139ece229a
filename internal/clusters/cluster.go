// Package clusters holds the clusters Applications deploy to, as Argo CD
// stores them: Secrets labelled argocd.argoproj.io/secret-type: cluster.
//
// This file is the contract between the Application controller and the
// cluster registry (issue #36); the registry that follows the Secrets
// replaces the in-memory one of static.go.
package clusters

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/rest"

	"github.com/skiffcd/skiff/api/v1alpha1"
)

const (
	// InClusterServer is the API server address of the cluster Skiff runs in.
	InClusterServer = "https://kubernetes.default.svc"
	// InClusterName is the name that means the same as InClusterServer.
	InClusterName = "in-cluster"
)

// ErrNotFound is wrapped by Resolve when no cluster matches a destination.
var ErrNotFound = errors.New("cluster not found")

// Cluster is one cluster Applications may deploy to.
type Cluster struct {
	Name, Server string
	// Namespaces limits Skiff to these namespaces; empty: all namespaces.
	Namespaces []string
	// ClusterResources says, with Namespaces set, whether Skiff may manage
	// cluster-scoped kinds.
	ClusterResources bool
	// Project makes the cluster project-scoped when set.
	Project     string
	Shard       *int
	Labels      map[string]string
	Annotations map[string]string
	// Config is Argo CD's `config` JSON: how to reach and log in.
	Config Config
}

// Config is the `config` key of an Argo CD cluster Secret.
type Config struct {
	Username        string          `json:"username,omitempty"`
	Password        string          `json:"password,omitempty"`
	BearerToken     string          `json:"bearerToken,omitempty"`
	TLSClientConfig TLSClientConfig `json:"tlsClientConfig"`
	ProxyURL        string          `json:"proxyUrl,omitempty"`
}

// TLSClientConfig is the TLS part of Config.
type TLSClientConfig struct {
	Insecure   bool   `json:"insecure"`
	ServerName string `json:"serverName,omitempty"`
	CAData     []byte `json:"caData,omitempty"`
	CertData   []byte `json:"certData,omitempty"`
	KeyData    []byte `json:"keyData,omitempty"`
}

// FromSecret reads a cluster Secret.
func FromSecret(s *corev1.Secret) (Cluster, error) {
	c := Cluster{
		Name:             string(s.Data["name"]),
		Server:           strings.TrimSuffix(string(s.Data["server"]), "/"),
		Project:          string(s.Data["project"]),
		ClusterResources: string(s.Data["clusterResources"]) == "true",
		Labels:           s.Labels,
		Annotations:      s.Annotations,
	}
	if c.Server == "" {
		return Cluster{}, fmt.Errorf("cluster Secret %s has no server", s.Name)
	}
	for ns := range strings.SplitSeq(string(s.Data["namespaces"]), ",") {
		if ns = strings.TrimSpace(ns); ns != "" {
			c.Namespaces = append(c.Namespaces, ns)
		}
	}
	if raw := string(s.Data["shard"]); raw != "" {
		n, err := strconv.Atoi(raw)
		if err != nil {
			return Cluster{}, fmt.Errorf("cluster Secret %s: shard %q is not a number", s.Name, raw)
		}
		c.Shard = &n
	}
	if raw := s.Data["config"]; len(raw) > 0 {
		if err := json.Unmarshal(raw, &c.Config); err != nil {
			// The JSON holds credentials: never quote it.
			return Cluster{}, fmt.Errorf("cluster Secret %s: config is not valid JSON", s.Name)
		}
	}
	return c, nil
}

// RESTConfig is how to reach c; base is Skiff's own config, used for the
// in-cluster entry.
func (c Cluster) RESTConfig(base *rest.Config) (*rest.Config, error) {
	if c.Server == InClusterServer {
		return rest.CopyConfig(base), nil
	}
	cfg := &rest.Config{
		Host:        c.Server,
		Username:    c.Config.Username,
		Password:    c.Config.Password,
		BearerToken: c.Config.BearerToken,
		TLSClientConfig: rest.TLSClientConfig{
			Insecure:   c.Config.TLSClientConfig.Insecure,
			ServerName: c.Config.TLSClientConfig.ServerName,
			CAData:     c.Config.TLSClientConfig.CAData,
			CertData:   c.Config.TLSClientConfig.CertData,
			KeyData:    c.Config.TLSClientConfig.KeyData,
		},
	}
	if base != nil {
		cfg.QPS, cfg.Burst = base.QPS, base.Burst
	}
	return cfg, nil
}

// InCluster is the implicit local cluster.
func InCluster() Cluster {
	return Cluster{Name: InClusterName, Server: InClusterServer, ClusterResources: true}
}

// Registry is the set of clusters Applications may deploy to.
type Registry interface {
	// Resolve finds the cluster an Application destination names (by
	// server, else by name); ErrNotFound wrapped when none.
	Resolve(dest v1alpha1.ApplicationDestination) (Cluster, error)
	List() []Cluster
	// Subscribe calls fn after any cluster Secret changed (added, updated,
	// deleted).
	Subscribe(fn func())
}
