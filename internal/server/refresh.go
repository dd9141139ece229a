package server

import (
	"context"
	"errors"
	"slices"
	"sort"

	"golang.org/x/sync/errgroup"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/skiffcd/skiff/api/v1alpha1"
	"github.com/skiffcd/skiff/internal/appops"
	"github.com/skiffcd/skiff/internal/appset"
	"github.com/skiffcd/skiff/internal/opserr"
)

// Refresher asks for an immediate comparison of the named Applications
// after a push to repoURL (their spelling of it).
type Refresher interface {
	RefreshApps(ctx context.Context, repoURL string, apps []string) error
}

// AnnotationRefresher refreshes apps as Argo CD's webhook handler does: it
// sets argocd.argoproj.io/refresh: normal, which makes the Application
// controller ask git for new commits at once. Forget, when set, also drops
// the repo server's resolved revisions of the repository.
type AnnotationRefresher struct {
	Client    client.Client
	Namespace string
	Forget    func(repoURL string)
}

// RefreshApps implements Refresher.
func (a *AnnotationRefresher) RefreshApps(ctx context.Context, repoURL string, apps []string) error {
	if a.Forget != nil {
		a.Forget(repoURL)
	}
	// One PATCH per app, several at a time: a push touching hundreds of
	// apps would otherwise outlast the 10 s a Git host gives a delivery.
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(annotationWriters)
	for _, name := range apps {
		g.Go(func() error {
			app := &v1alpha1.Application{}
			app.Namespace, app.Name = a.Namespace, name
			if err := appops.Refresh(ctx, a.Client, app, v1alpha1.RefreshNormal); err != nil && !errors.Is(err, appops.ErrNotFound) {
				return err
			}
			return nil
		})
	}
	return g.Wait()
}

// annotationWriters bounds the refresh annotations written at once.
const annotationWriters = 16

// refreshFor finds the apps a push touched and asks the Refresher to
// refresh them, grouped by their spelling of the repository URL. It
// returns the names refreshed.
func (s *Server) refreshFor(ctx context.Context, ev *push) ([]string, error) {
	var list v1alpha1.ApplicationList
	if err := s.Client.List(ctx, &list, client.InNamespace(s.Namespace)); err != nil {
		return nil, err
	}
	byRepo := map[string][]string{}
	refreshed := []string{}
	for i := range list.Items {
		if repo := touchedSource(&list.Items[i], ev); repo != "" {
			byRepo[repo] = append(byRepo[repo], list.Items[i].Name)
			refreshed = append(refreshed, list.Items[i].Name)
		}
	}
	if s.Refresher == nil {
		return refreshed, nil
	}
	repos := make([]string, 0, len(byRepo))
	for repo := range byRepo {
		repos = append(repos, repo)
	}
	sort.Strings(repos)
	for _, repo := range repos {
		if err := s.Refresher.RefreshApps(ctx, repo, byRepo[repo]); err != nil {
			return nil, err
		}
	}
	sort.Strings(refreshed)
	return refreshed, nil
}

// refreshAppSetsFor asks the ApplicationSet controller to generate again,
// with fresh git revisions, every set whose git generators read a pushed
// repository, in any spelling the webhook matching of apps accepts
// (whatever branch: a generator's revision may be any). It returns their
// names.
func (s *Server) refreshAppSetsFor(ctx context.Context, ev *push) ([]string, error) {
	ops := s.appSetOps()
	sets, err := ops.List(ctx, "", nil)
	if err != nil {
		return nil, err
	}
	refreshed := []string{}
	for i := range sets {
		if !slices.ContainsFunc(appset.GitRepos(&sets[i].Spec), func(repo string) bool { return sameRepo(repo, ev.RepoURLs) }) {
			continue
		}
		if err := ops.Refresh(ctx, sets[i].Name); err != nil && !errors.Is(err, opserr.ErrNotFound) {
			return nil, err
		}
		refreshed = append(refreshed, sets[i].Name)
	}
	return refreshed, nil
}
