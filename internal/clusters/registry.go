package clusters

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/skiffcd/skiff/api/v1alpha1"
	"github.com/skiffcd/skiff/internal/opserr"
)

// The argocd-cm key that turns the implicit in-cluster destination off.
const (
	configMapName       = "argocd-cm"
	keyInClusterEnabled = "cluster.inClusterEnabled"
)

// ErrNotSynced is returned by Resolve until the registry has read the
// Secrets once.
var ErrNotSynced = errors.New("the cluster Secrets have not been read yet")

// Snapshot is the clusters one version of the Secrets and argocd-cm
// describe.
type Snapshot struct {
	// Clusters sorted by name then server; the in-cluster one included
	// when enabled.
	Clusters []Cluster
	// Invalid holds one error per cluster Secret that could not be read,
	// naming the Secret and key; the other clusters stand.
	Invalid []error
}

// NewSnapshot reads the cluster Secrets (others are skipped) and argocd-cm's
// data. The in-cluster cluster is implicit unless cluster.inClusterEnabled
// is "false"; a Secret for its server replaces it (Argo CD lets one name
// it or limit its namespaces), and none is kept when it is disabled.
func NewSnapshot(secrets []corev1.Secret, argocdCM map[string]string) Snapshot {
	inCluster := !strings.EqualFold(strings.TrimSpace(argocdCM[keyInClusterEnabled]), "false")
	var snap Snapshot
	servers := map[string]string{} // server -> Secret name that has it
	byName := slices.Clone(secrets)
	slices.SortFunc(byName, func(a, b corev1.Secret) int { return strings.Compare(a.Name, b.Name) })
	for i := range byName {
		s := &byName[i]
		if s.Labels[SecretTypeLabel] != SecretTypeCluster {
			continue
		}
		c, err := FromSecret(s)
		switch {
		case err != nil:
			snap.Invalid = append(snap.Invalid, err)
			continue
		case c.Server == InClusterServer && !inCluster:
			snap.Invalid = append(snap.Invalid, fmt.Errorf("cluster Secret %s/%s: the in-cluster destination is disabled (argocd-cm %s)", s.Namespace, s.Name, keyInClusterEnabled))
			continue
		}
		if other, dup := servers[c.Server]; dup {
			snap.Invalid = append(snap.Invalid, fmt.Errorf("cluster Secret %s/%s: server %s is already given by Secret %s", s.Namespace, s.Name, c.Server, other))
			continue
		}
		servers[c.Server] = s.Name
		snap.Clusters = append(snap.Clusters, c)
	}
	if _, given := servers[InClusterServer]; inCluster && !given {
		snap.Clusters = append(snap.Clusters, InCluster())
	}
	slices.SortFunc(snap.Clusters, func(a, b Cluster) int {
		if c := strings.Compare(a.Name, b.Name); c != 0 {
			return c
		}
		return strings.Compare(a.Server, b.Server)
	})
	return snap
}

// Resolve finds the cluster dest names: by server when it has one (and
// then its name, if given, must be that cluster's), else by name.
func (s Snapshot) Resolve(dest v1alpha1.ApplicationDestination) (Cluster, error) {
	server := strings.TrimRight(dest.Server, "/")
	switch {
	case server != "":
		for _, c := range s.Clusters {
			if c.Server != server {
				continue
			}
			if dest.Name != "" && dest.Name != c.Name {
				return Cluster{}, opserr.Invalid("destination server %s is cluster %q, not %q", server, c.Name, dest.Name)
			}
			return c, nil
		}
		return Cluster{}, opserr.New(ErrNotFound, fmt.Errorf("no cluster has server %s", server))
	case dest.Name != "":
		var found []Cluster
		for _, c := range s.Clusters {
			if c.Name == dest.Name {
				found = append(found, c)
			}
		}
		switch len(found) {
		case 0:
			return Cluster{}, opserr.New(ErrNotFound, fmt.Errorf("no cluster is named %q", dest.Name))
		case 1:
			return found[0], nil
		}
		return Cluster{}, opserr.Invalid("%d clusters are named %q: name the destination by server", len(found), dest.Name)
	}
	return Cluster{}, opserr.Invalid("the destination names neither a server nor a cluster name")
}

// Secrets is the Registry of the cluster Secrets of one namespace, read
// from a cache (the manager's cache of Skiff's namespace): a Secret or
// argocd-cm that changes takes effect at once, without a restart. It is a
// manager Runnable that runs on every replica.
type Secrets struct {
	informers cache.Informers
	reader    client.Reader
	namespace string

	mu      sync.RWMutex
	snap    *Snapshot // nil until synced
	version string    // resourceVersions snap was built from
	subs    []func()
	rebuild sync.Mutex
}

// NewSecrets follows the cluster Secrets and argocd-cm of namespace through
// informers and reader, both of one cache of that namespace.
func NewSecrets(informers cache.Informers, reader client.Reader, namespace string) *Secrets {
	return &Secrets{informers: informers, reader: reader, namespace: namespace}
}

// Start reads the Secrets once their informers have synced and again on
// every change, until ctx ends.
func (r *Secrets) Start(ctx context.Context) error {
	handler := toolscache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { r.refresh(ctx) },
		UpdateFunc: func(any, any) { r.refresh(ctx) },
		DeleteFunc: func(any) { r.refresh(ctx) },
	}
	var synced []toolscache.InformerSynced
	for _, obj := range []client.Object{&corev1.Secret{}, &corev1.ConfigMap{}} {
		inf, err := r.informers.GetInformer(ctx, obj)
		if err != nil {
			return fmt.Errorf("watching %T in %s: %w", obj, r.namespace, err)
		}
		reg, err := inf.AddEventHandler(handler)
		if err != nil {
			return fmt.Errorf("watching %T in %s: %w", obj, r.namespace, err)
		}
		synced = append(synced, reg.HasSynced)
	}
	if !toolscache.WaitForCacheSync(ctx.Done(), synced...) {
		return nil // ctx ended
	}
	r.refresh(ctx)
	<-ctx.Done()
	return nil
}

// NeedLeaderElection: every replica's API server and controllers read it.
func (r *Secrets) NeedLeaderElection() bool { return false }

// refresh rebuilds the snapshot when a cluster Secret or argocd-cm changed
// and then tells the subscribers.
func (r *Secrets) refresh(ctx context.Context) {
	r.rebuild.Lock()
	defer r.rebuild.Unlock()
	var secrets corev1.SecretList
	if err := r.reader.List(ctx, &secrets, client.InNamespace(r.namespace), client.MatchingLabels{SecretTypeLabel: SecretTypeCluster}); err != nil {
		return // the cache is stopping or not synced: the next event reads again
	}
	var cm corev1.ConfigMap
	if err := r.reader.Get(ctx, types.NamespacedName{Namespace: r.namespace, Name: configMapName}, &cm); client.IgnoreNotFound(err) != nil {
		return
	}
	version := cm.Data[keyInClusterEnabled]
	for _, s := range secrets.Items {
		version += "/" + s.Name + "@" + s.ResourceVersion
	}
	r.mu.RLock()
	same := r.snap != nil && r.version == version
	r.mu.RUnlock()
	if same {
		return
	}
	snap := NewSnapshot(secrets.Items, cm.Data)
	r.mu.Lock()
	r.snap, r.version = &snap, version
	subs := slices.Clone(r.subs)
	r.mu.Unlock()
	for _, fn := range subs {
		fn()
	}
}

// Snapshot returns the current clusters and invalid Secrets, and false
// until the Secrets have been read once.
func (r *Secrets) Snapshot() (Snapshot, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	if r.snap == nil {
		return Snapshot{}, false
	}
	return *r.snap, true
}

// Resolve implements Registry; before the first read it returns ErrNotSynced.
func (r *Secrets) Resolve(dest v1alpha1.ApplicationDestination) (Cluster, error) {
	snap, ok := r.Snapshot()
	if !ok {
		return Cluster{}, ErrNotSynced
	}
	return snap.Resolve(dest)
}

// List implements Registry.
func (r *Secrets) List() []Cluster {
	snap, _ := r.Snapshot()
	return slices.Clone(snap.Clusters)
}

// Subscribe implements Registry.
func (r *Secrets) Subscribe(fn func()) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.subs = append(r.subs, fn)
}

var _ Registry = (*Secrets)(nil)
