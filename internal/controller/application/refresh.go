package application

import (
	"context"
	"fmt"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/skiffcd/skiff/api/v1alpha1"
	"github.com/skiffcd/skiff/internal/reposerver"
)

// RefreshApps asks for an immediate comparison of the named Applications
// that checks git for new commits, as the refresh annotation
// argocd.argoproj.io/refresh: normal does, without writing the annotation:
// a webhook's push to a repository of many apps costs no Application write
// before the comparisons. It implements the API server's Refresher for the
// replica that runs the controllers; it blocks only while the comparison
// queue's intake is full, until ctx ends.
func (r *Reconciler) RefreshApps(ctx context.Context, repoURL string, apps []string) error {
	if r.Repo != nil {
		r.Repo.Forget(repoURL)
	}
	for _, name := range apps {
		r.requestRefresh(name)
		if err := r.compareNow.send(ctx, r.Namespace, name); err != nil {
			return fmt.Errorf("refreshing application %s: %w", name, err)
		}
	}
	return nil
}

// requestRefresh records a normal refresh of app for its next comparison,
// asked now; a later request replaces an earlier one not yet taken.
func (r *Reconciler) requestRefresh(app string) {
	r.refreshMu.Lock()
	defer r.refreshMu.Unlock()
	if r.refreshes == nil {
		r.refreshes = map[string]time.Time{}
	}
	r.refreshes[app] = r.now()
}

// takeRefresh returns the refresh asked for app: its annotation's (asked at
// an unknown time, so zero), else a normal one when one was asked in
// process, with the time it was asked; it forgets the latter.
func (r *Reconciler) takeRefresh(app, annotated string) (string, time.Time) {
	r.refreshMu.Lock()
	askedAt, requested := r.refreshes[app]
	delete(r.refreshes, app)
	r.refreshMu.Unlock()
	if annotated == "" && requested {
		return v1alpha1.RefreshNormal, askedAt
	}
	return annotated, time.Time{}
}

// compareAppsOnMove queues a comparison of every app with a source that
// moved to a new revision: the first app whose poll (or refresh) finds a
// commit makes all apps of that repository and revision notice it, not
// each at its own poll. The comparisons reuse the revision just resolved.
func (r *Reconciler) compareAppsOnMove(move reposerver.RevisionMove) {
	var apps v1alpha1.ApplicationList
	// The cache answers; an error leaves the apps to their polls.
	if err := r.Client.List(context.Background(), &apps, client.InNamespace(r.Namespace), client.UnsafeDisableDeepCopy); err != nil {
		return
	}
	for i := range apps.Items {
		for _, src := range apps.Items[i].Spec.GetSources() {
			if src.RepoURL == move.RepoURL && src.Chart == move.Chart && src.TargetRevision == move.TargetRevision {
				r.enqueueCompare(apps.Items[i].Name)
				break
			}
		}
	}
}
