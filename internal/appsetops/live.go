package appsetops

import (
	"context"
	"fmt"
	"io/fs"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/skiffcd/skiff/api/v1alpha1"
	"github.com/skiffcd/skiff/internal/appset"
	"github.com/skiffcd/skiff/internal/appset/scm"
	"github.com/skiffcd/skiff/internal/clusters"
	"github.com/skiffcd/skiff/internal/reposerver"
)

// Live generates a set's Applications from what Skiff knows now: the
// clusters of Clusters, git trees checked out by Repo, and the
// clusterDecisionResource ConfigMaps and resources of Namespace. The
// ApplicationSet controller, the API's generate and `skiff appset
// generate --core` share it, so a preview is what the controller makes.
type Live struct {
	Repo *reposerver.Server
	// Clusters lists the clusters (a clusters.Registry does).
	Clusters  interface{ List() []clusters.Cluster }
	Reader    client.Reader
	Dynamic   dynamic.Interface
	Namespace string
	// SCM is what the SCM Provider and Pull Request generators may reach
	// (the server's --appset-* flags); the zero value allows only the
	// public hosts' APIs.
	SCM scm.Policy
	// Fresh asks the remotes what the git revisions are now instead of
	// reusing a recent resolution: a set refreshed after a push.
	Fresh bool
}

// Applications renders set's Applications and says when to generate again
// without an event (0: not needed).
func (l Live) Applications(ctx context.Context, set *v1alpha1.ApplicationSet) ([]v1alpha1.Application, time.Duration, error) {
	trees := &treeSet{}
	defer trees.release()
	in := appset.Inputs{
		Git: func(repoURL, revision string) (fs.FS, string, error) {
			if l.Repo == nil {
				return nil, "", fmt.Errorf("git generators are not available here")
			}
			t, err := l.Repo.Tree(ctx, repoURL, revision, l.Fresh)
			if err != nil {
				return nil, "", err
			}
			trees.add(t)
			return t.FS, t.SHA, nil
		},
		ClusterDecisions: func(gen *v1alpha1.DuckTypeGenerator) (appset.DecisionResources, error) {
			return l.decisions(ctx, gen)
		},
	}
	if l.Clusters != nil {
		in.Clusters = l.Clusters.List()
	}
	if l.Reader != nil {
		// Tokens come from the Secrets of Skiff's namespace, named by
		// each generator's tokenRef.
		sc := l.SCM.Client(ctx, l.Reader, l.Namespace)
		in.SCM = func(gen *v1alpha1.SCMProviderGenerator) (appset.SCMProvider, error) { return sc.Provider(ctx, gen) }
		in.PullRequests = func(gen *v1alpha1.PullRequestGenerator) ([]appset.PullRequest, error) {
			return sc.PullRequests(ctx, gen)
		}
	}
	return appset.Applications(&set.Spec, in)
}

// Listed is a fixed list of clusters, for Live.Clusters.
type Listed []clusters.Cluster

// List returns the clusters.
func (l Listed) List() []clusters.Cluster { return l }

// Generate is Applications as a Generator.
func (l Live) Generate(ctx context.Context, set *v1alpha1.ApplicationSet) ([]v1alpha1.Application, error) {
	apps, _, err := l.Applications(ctx, set)
	return apps, err
}

// decisions reads a clusterDecisionResource generator's ConfigMap and the
// resources it names, in Namespace.
func (l Live) decisions(ctx context.Context, gen *v1alpha1.DuckTypeGenerator) (appset.DecisionResources, error) {
	if l.Reader == nil || l.Dynamic == nil {
		return appset.DecisionResources{}, fmt.Errorf("cluster decision resources are not available here")
	}
	var cm corev1.ConfigMap
	if err := l.Reader.Get(ctx, client.ObjectKey{Namespace: l.Namespace, Name: gen.ConfigMapRef}, &cm); err != nil {
		return appset.DecisionResources{}, fmt.Errorf("reading the ConfigMap %s: %w", gen.ConfigMapRef, err)
	}
	gvr, err := appset.DecisionResourceOf(cm.Data)
	if err != nil {
		return appset.DecisionResources{}, fmt.Errorf("ConfigMap %s: %w", gen.ConfigMapRef, err)
	}
	resources := l.Dynamic.Resource(gvr).Namespace(l.Namespace)
	out := appset.DecisionResources{ConfigMap: cm.Data}
	if gen.Name != "" {
		obj, err := resources.Get(ctx, gen.Name, metav1.GetOptions{})
		if err != nil {
			return appset.DecisionResources{}, fmt.Errorf("reading %s %s: %w", gvr.Resource, gen.Name, err)
		}
		out.Resources = append(out.Resources, obj.Object)
		return out, nil
	}
	selector, err := metav1.LabelSelectorAsSelector(&gen.LabelSelector)
	if err != nil {
		return appset.DecisionResources{}, fmt.Errorf("the labelSelector: %w", err)
	}
	list, err := resources.List(ctx, metav1.ListOptions{LabelSelector: selector.String()})
	if err != nil {
		return appset.DecisionResources{}, fmt.Errorf("listing %s: %w", gvr.Resource, err)
	}
	for _, item := range list.Items {
		out.Resources = append(out.Resources, item.Object)
	}
	return out, nil
}

// treeSet holds the checkouts one generation reads until it ends.
type treeSet struct {
	mu    sync.Mutex
	trees []*reposerver.Tree
}

func (s *treeSet) add(t *reposerver.Tree) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.trees = append(s.trees, t)
}

func (s *treeSet) release() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, t := range s.trees {
		t.Release()
	}
	s.trees = nil
}
