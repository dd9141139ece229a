package server

import (
	"context"
	"fmt"
	"sort"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/skiffcd/skiff/api/v1alpha1"
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
	for _, name := range apps {
		app := &v1alpha1.Application{}
		app.Namespace, app.Name = a.Namespace, name
		if err := a.Client.Patch(ctx, app, refreshPatch(v1alpha1.RefreshNormal)); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("refreshing application %s: %w", name, err)
		}
	}
	return nil
}

// refreshPatch sets the refresh annotation to mode whatever the copy at
// hand says: a patch computed against a cached copy that still shows an
// earlier refresh's annotation (which the controller has since removed)
// would be empty, and no refresh would happen.
func refreshPatch(mode string) client.Patch {
	return client.RawPatch(types.MergePatchType,
		[]byte(`{"metadata":{"annotations":{"`+v1alpha1.AnnotationRefresh+`":"`+mode+`"}}}`))
}

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
