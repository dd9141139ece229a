// Package clusterops is what can be done to the clusters Skiff deploys to,
// the same under the API server and `skiff cluster --core`: list, get,
// create or update (as a cluster Secret), and remove. Like appops it uses
// no HTTP, no flags and no controller; its errors carry a kind from
// internal/opserr. Answers never carry credentials.
package clusterops

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/skiffcd/skiff/api/v1alpha1"
	"github.com/skiffcd/skiff/internal/clusters"
	"github.com/skiffcd/skiff/internal/opserr"
)

// Cluster is Argo CD's Cluster as its API reads and writes it. In answers
// Config has its credentials masked.
type Cluster struct {
	Server           string            `json:"server"`
	Name             string            `json:"name"`
	Config           clusters.Config   `json:"config"`
	Namespaces       []string          `json:"namespaces,omitempty"`
	ClusterResources bool              `json:"clusterResources,omitempty"`
	Project          string            `json:"project,omitempty"`
	Shard            *int              `json:"shard,omitempty"`
	Labels           map[string]string `json:"labels,omitempty"`
	Annotations      map[string]string `json:"annotations,omitempty"`
	// ConnectionState, ServerVersion and Info are the controller's view of
	// the cluster (Ops.States); ConnectionState and ServerVersion repeat
	// Info's, as Argo CD's API does. Unknown when nothing reports them.
	ConnectionState ConnectionState `json:"connectionState"`
	ServerVersion   string          `json:"serverVersion,omitempty"`
	Info            clusters.Info   `json:"info"`
	// Applications lists the apps that target the cluster.
	Applications []string `json:"applications,omitempty"`
	// SecretName is the cluster Secret; empty for the implicit in-cluster one.
	SecretName string `json:"secretName,omitempty"`
}

// ConnectionState is Argo CD's connection state of a cluster.
type ConnectionState = clusters.ConnectionState

// States reports the clusters' states as the Application controller sees
// them (Reconciler.ClusterStates); the API server reaches the controller
// through it, since operations never import controllers.
type States interface {
	ClusterStates(ctx context.Context) ([]clusters.State, error)
}

// List is the clusters and the cluster Secrets that could not be read.
type List struct {
	Items []Cluster `json:"items"`
	// Invalid names each cluster Secret that is not usable and why.
	Invalid []string `json:"invalid,omitempty"`
}

// Ops runs the operations on the cluster Secrets of Namespace. Reader reads
// Secrets and argocd-cm (in the API server, its cache of that namespace),
// Apps the Applications (nil means Reader); Client writes. States, when
// set, gives List and Get the clusters' connection states; without it
// they are Unknown.
type Ops struct {
	Reader    client.Reader
	Apps      client.Reader
	Client    client.Client
	Namespace string
	States    States
}

// Snapshot reads the clusters as the controller sees them.
func (o Ops) Snapshot(ctx context.Context) (clusters.Snapshot, error) {
	var secrets corev1.SecretList
	if err := o.Reader.List(ctx, &secrets, client.InNamespace(o.Namespace),
		client.MatchingLabels{clusters.SecretTypeLabel: clusters.SecretTypeCluster}); err != nil {
		return clusters.Snapshot{}, fmt.Errorf("listing the cluster Secrets of %s: %w", o.Namespace, err)
	}
	var cm corev1.ConfigMap
	if err := o.Reader.Get(ctx, types.NamespacedName{Namespace: o.Namespace, Name: "argocd-cm"}, &cm); client.IgnoreNotFound(err) != nil {
		return clusters.Snapshot{}, fmt.Errorf("reading argocd-cm: %w", err)
	}
	return clusters.NewSnapshot(secrets.Items, cm.Data), nil
}

// targets maps each cluster's server to the apps that target it.
func (o Ops) targets(ctx context.Context, snap clusters.Snapshot) (map[string][]string, error) {
	reader := o.Apps
	if reader == nil {
		reader = o.Reader
	}
	var apps v1alpha1.ApplicationList
	if err := reader.List(ctx, &apps, client.InNamespace(o.Namespace)); err != nil {
		return nil, fmt.Errorf("listing the Applications of %s: %w", o.Namespace, err)
	}
	out := map[string][]string{}
	for _, app := range apps.Items {
		if c, err := snap.Resolve(app.Spec.Destination); err == nil {
			out[c.Server] = append(out[c.Server], app.Name)
		}
	}
	for _, names := range out {
		slices.Sort(names)
	}
	return out, nil
}

// Public is the answer for c: its credentials masked.
func Public(c clusters.Cluster, apps []string) Cluster { return of(c.Public(), apps) }

// Body is the request that saves c, credentials included.
func Body(c clusters.Cluster) Cluster { return of(c, nil) }

func of(p clusters.Cluster, apps []string) Cluster {
	return Cluster{
		Server: p.Server, Name: p.Name, Config: p.Config, Namespaces: p.Namespaces,
		ClusterResources: p.ClusterResources, Project: p.Project, Shard: p.Shard,
		Labels: p.Labels, Annotations: p.Annotations, SecretName: p.SecretName,
		ConnectionState: ConnectionState{Status: clusters.ConnectionUnknown}, Applications: apps,
		Info: clusters.Info{ConnectionState: ConnectionState{Status: clusters.ConnectionUnknown}},
	}
}

// withStates sets each cluster's state from states, by server: a cluster
// without one is Unknown and not monitored; when the states could not be
// read (err), every cluster is Unknown with that error.
func withStates(items []Cluster, states []clusters.State, err error) {
	byServer := make(map[string]clusters.State, len(states))
	for _, s := range states {
		byServer[s.Server] = s
	}
	for i := range items {
		s, ok := byServer[items[i].Server]
		switch {
		case err != nil:
			s = clusters.UnknownState(items[i].Server, "connection state unavailable: "+err.Error())
		case !ok:
			s = clusters.UnknownState(items[i].Server, clusters.NotMonitored)
		}
		items[i].Info = s.Info
		items[i].ConnectionState, items[i].ServerVersion = s.Info.ConnectionState, s.Info.ServerVersion
	}
}

// addStates gives items the states of o.States, when set.
func (o Ops) addStates(ctx context.Context, items []Cluster) {
	if o.States == nil {
		return
	}
	states, err := o.States.ClusterStates(ctx)
	withStates(items, states, err)
}

// List returns every cluster, with the apps targeting each.
func (o Ops) List(ctx context.Context) (List, error) {
	snap, err := o.Snapshot(ctx)
	if err != nil {
		return List{}, err
	}
	targets, err := o.targets(ctx, snap)
	if err != nil {
		return List{}, err
	}
	list := List{Items: make([]Cluster, 0, len(snap.Clusters))}
	for _, c := range snap.Clusters {
		list.Items = append(list.Items, Public(c, targets[c.Server]))
	}
	o.addStates(ctx, list.Items)
	for _, err := range snap.Invalid {
		list.Invalid = append(list.Invalid, err.Error())
	}
	return list, nil
}

// find resolves a server URL or a cluster name.
func find(snap clusters.Snapshot, serverOrName string) (clusters.Cluster, error) {
	if strings.Contains(serverOrName, "://") {
		return snap.Resolve(v1alpha1.ApplicationDestination{Server: serverOrName})
	}
	return snap.Resolve(v1alpha1.ApplicationDestination{Name: serverOrName})
}

// resolve reads the clusters and finds the one of a server URL or name.
func (o Ops) resolve(ctx context.Context, serverOrName string) (clusters.Snapshot, clusters.Cluster, error) {
	snap, err := o.Snapshot(ctx)
	if err != nil {
		return clusters.Snapshot{}, clusters.Cluster{}, err
	}
	c, err := find(snap, serverOrName)
	return snap, c, err
}

// Get returns the cluster of a server URL or name.
func (o Ops) Get(ctx context.Context, serverOrName string) (Cluster, error) {
	snap, c, err := o.resolve(ctx, serverOrName)
	if err != nil {
		return Cluster{}, err
	}
	targets, err := o.targets(ctx, snap)
	if err != nil {
		return Cluster{}, err
	}
	items := []Cluster{Public(c, targets[c.Server])}
	o.addStates(ctx, items)
	return items[0], nil
}

// Spec is what a create or update writes, credentials included.
func (c Cluster) Spec() clusters.Cluster {
	return clusters.Cluster{
		Name: c.Name, Server: strings.TrimRight(c.Server, "/"), Namespaces: c.Namespaces,
		ClusterResources: c.ClusterResources, Project: c.Project, Shard: c.Shard,
		Labels: c.Labels, Annotations: c.Annotations, Config: c.Config,
	}
}

// Save writes c's cluster Secret. A cluster of that server that exists is
// refused unless upsert, and then replaced in its own Secret. The Secret
// is checked as the registry will read it before it is written.
func (o Ops) Save(ctx context.Context, c clusters.Cluster, upsert bool) (Cluster, error) {
	if c.Name == "" {
		c.Name = c.Server
	}
	snap, err := o.Snapshot(ctx)
	if err != nil {
		return Cluster{}, err
	}
	existing, err := snap.Resolve(v1alpha1.ApplicationDestination{Server: c.Server})
	switch {
	case err == nil && !upsert:
		return Cluster{}, opserr.New(opserr.ErrConflict, fmt.Errorf("cluster %s exists (as %q): update it, or add it with upsert", c.Server, existing.Name))
	case err == nil:
		c.SecretName = existing.SecretName
	case !errors.Is(err, clusters.ErrNotFound):
		return Cluster{}, err
	}
	secret, err := c.ToSecret(o.Namespace)
	if err != nil {
		return Cluster{}, err
	}
	parsed, err := clusters.FromSecret(secret)
	if err != nil {
		return Cluster{}, err
	}
	if c.SecretName == "" {
		err = o.Client.Create(ctx, secret)
	} else {
		err = o.Client.Update(ctx, secret) // no resourceVersion: the new content replaces the Secret
	}
	if apierrors.IsAlreadyExists(err) {
		return Cluster{}, opserr.New(opserr.ErrConflict, fmt.Errorf("a Secret %s/%s exists and is not a cluster Secret for %s", o.Namespace, secret.Name, c.Server))
	}
	if err != nil {
		return Cluster{}, opserr.Classify(fmt.Errorf("writing cluster Secret %s/%s: %w", o.Namespace, secret.Name, err))
	}
	return Public(parsed, nil), nil
}

// Update replaces the cluster of serverOrName with c; c's server must be
// the same (a new server is a new cluster).
func (o Ops) Update(ctx context.Context, serverOrName string, c clusters.Cluster) (Cluster, error) {
	_, existing, err := o.resolve(ctx, serverOrName)
	if err != nil {
		return Cluster{}, err
	}
	if c.Server == "" {
		c.Server = existing.Server
	}
	if c.Server != existing.Server {
		return Cluster{}, opserr.Invalid("cluster %q has server %s; a new server is a new cluster", existing.Name, existing.Server)
	}
	return o.Save(ctx, c, true)
}

// Delete removes the cluster Secret of serverOrName. While apps target the
// cluster it is refused unless force: their destination would be gone
// (they would go Unknown, nothing pruned). The implicit in-cluster
// cluster has no Secret; argocd-cm's cluster.inClusterEnabled turns it off.
func (o Ops) Delete(ctx context.Context, serverOrName string, force bool) error {
	snap, c, err := o.resolve(ctx, serverOrName)
	if err != nil {
		return err
	}
	if c.SecretName == "" {
		return opserr.Invalid("cluster %q is the implicit in-cluster one; set cluster.inClusterEnabled: \"false\" in argocd-cm to remove it", c.Name)
	}
	if !force {
		targets, err := o.targets(ctx, snap)
		if err != nil {
			return err
		}
		if apps := targets[c.Server]; len(apps) > 0 {
			return opserr.New(opserr.ErrConflict, fmt.Errorf("cluster %q is the destination of %d app(s): %s; remove them first or force", c.Name, len(apps), strings.Join(apps, ", ")))
		}
	}
	secret := &corev1.Secret{}
	secret.Namespace, secret.Name = o.Namespace, c.SecretName
	if err := o.Client.Delete(ctx, secret); client.IgnoreNotFound(err) != nil {
		return opserr.Classify(fmt.Errorf("deleting cluster Secret %s/%s: %w", o.Namespace, c.SecretName, err))
	}
	return nil
}
