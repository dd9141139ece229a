package application

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/skiffcd/skiff/api/v1alpha1"
	"github.com/skiffcd/skiff/internal/reposerver"
	"github.com/skiffcd/skiff/internal/source"
	"github.com/skiffcd/skiff/internal/testgit"
	"github.com/skiffcd/skiff/internal/testwait"
)

// A refresh asked in process (a webhook's push) makes the app check git at
// once, long before its poll, without writing the refresh annotation.
func TestRefreshAppsFindsANewCommitWithoutAnAnnotation(t *testing.T) {
	ctx := context.Background()
	argocd := cluster.Namespace(t)
	dest := cluster.Namespace(t)
	c, r := startReconciler(t, argocd, 10*time.Minute)
	repo := testgit.New(t)
	repo.Commit(map[string]string{"app/a.yaml": strings.ReplaceAll(configMapYAML, "%s", "a")})
	app := newApp(argocd, "hooked", repo.URL(), "app", dest, &v1alpha1.SyncPolicy{Automated: &v1alpha1.SyncPolicyAutomated{}})
	if err := c.Create(ctx, app); err != nil {
		t.Fatal(err)
	}
	key := client.ObjectKeyFromObject(app)
	waitApp(t, c, key, "auto-synced", statusIs(v1alpha1.SyncStatusCodeSynced, v1alpha1.HealthStatusHealthy))

	pushed := repo.Commit(map[string]string{"app/a.yaml": strings.ReplaceAll(strings.ReplaceAll(configMapYAML, "%s", "a"), "k: v", "k: pushed")})
	// The next poll is minutes away: nothing may notice the commit yet.
	testwait.Consistently(t, "the commit unnoticed before any refresh", 2*time.Second, func() error {
		if err := c.Get(ctx, key, app); err != nil {
			return err
		}
		if app.Status.Sync.Revision == pushed {
			return errors.New("the commit was noticed before any refresh: the test proves nothing")
		}
		return nil
	})

	if err := r.RefreshApps(ctx, repo.URL(), []string{"hooked"}); err != nil {
		t.Fatal(err)
	}
	app = waitApp(t, c, key, "the pushed commit synced", func(a *v1alpha1.Application) bool {
		return a.Status.Sync.Revision == pushed && a.Status.Sync.Status == v1alpha1.SyncStatusCodeSynced
	})
	if v, ok := app.Annotations[v1alpha1.AnnotationRefresh]; ok {
		t.Errorf("the in-process refresh wrote the annotation %s: %q", v1alpha1.AnnotationRefresh, v)
	}
	cm := &corev1.ConfigMap{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: dest, Name: "a"}, cm); err != nil {
		t.Fatal(err)
	}
	if cm.Data["k"] != "pushed" {
		t.Errorf("live ConfigMap data k = %q, want the pushed value", cm.Data["k"])
	}
}

// The first app whose refresh finds a commit makes every app of the same
// repository and revision compare at once, long before their own polls.
func TestANewCommitFoundForOneAppReachesItsNeighbours(t *testing.T) {
	ctx := context.Background()
	argocd := cluster.Namespace(t)
	dest := cluster.Namespace(t)
	c, _ := startReconciler(t, argocd, 10*time.Minute)
	repo := testgit.New(t)
	repo.Commit(map[string]string{
		"one/a.yaml": strings.ReplaceAll(configMapYAML, "%s", "one"),
		"two/a.yaml": strings.ReplaceAll(configMapYAML, "%s", "two"),
	})
	auto := &v1alpha1.SyncPolicy{Automated: &v1alpha1.SyncPolicyAutomated{}}
	one := newApp(argocd, "one", repo.URL(), "one", dest, auto)
	two := newApp(argocd, "two", repo.URL(), "two", dest, auto)
	for _, app := range []*v1alpha1.Application{one, two} {
		if err := c.Create(ctx, app); err != nil {
			t.Fatal(err)
		}
		waitApp(t, c, client.ObjectKeyFromObject(app), app.Name+" auto-synced", statusIs(v1alpha1.SyncStatusCodeSynced, v1alpha1.HealthStatusHealthy))
	}

	pushed := repo.Commit(map[string]string{"two/a.yaml": strings.ReplaceAll(strings.ReplaceAll(configMapYAML, "%s", "two"), "k: v", "k: pushed")})
	patch := client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"annotations":{"`+v1alpha1.AnnotationRefresh+`":"normal"}}}`))
	if err := c.Patch(ctx, one, patch); err != nil {
		t.Fatal(err)
	}
	syncedAtPush := func(a *v1alpha1.Application) bool {
		return a.Status.Sync.Revision == pushed && a.Status.Sync.Status == v1alpha1.SyncStatusCodeSynced
	}
	waitApp(t, c, client.ObjectKeyFromObject(one), "the refreshed app at the pushed commit", syncedAtPush)
	waitApp(t, c, client.ObjectKeyFromObject(two), "its neighbour synced at the pushed commit", syncedAtPush)
	cm := &corev1.ConfigMap{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: dest, Name: "two"}, cm); err != nil {
		t.Fatal(err)
	}
	if cm.Data["k"] != "pushed" {
		t.Errorf("the neighbour's ConfigMap has k = %q, want the pushed value", cm.Data["k"])
	}
}

// A webhook's refresh of every app of a repository asks git once, not once
// per app: an answer git gave after the refresh was asked serves the apps
// compared after it, one by one here (one comparison worker), as in a long
// queue.
func TestRefreshAppsAsksGitOnceForTheApps(t *testing.T) {
	ctx := context.Background()
	argocd := cluster.Namespace(t)
	dest := cluster.Namespace(t)
	var asks atomic.Int64
	c, r := startReconciler(t, argocd, 10*time.Minute, func(r *Reconciler) {
		r.CompareWorkers = 1
		var err error
		r.Repo, err = reposerver.NewInDir(t.TempDir(), reposerver.Options{
			Credentials: func(context.Context, string) (source.Credentials, error) {
				asks.Add(1) // once per question to the remote
				return source.Credentials{}, nil
			},
		})
		if err != nil {
			t.Fatal(err)
		}
	})
	repo := testgit.New(t)
	files := map[string]string{}
	var names []string
	for i := range 5 {
		name := fmt.Sprintf("asks-once-%d", i)
		names = append(names, name)
		files[name+"/a.yaml"] = strings.ReplaceAll(configMapYAML, "%s", name)
	}
	repo.Commit(files)
	for _, name := range names {
		if err := c.Create(ctx, newApp(argocd, name, repo.URL(), name, dest, nil)); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range names {
		waitApp(t, c, client.ObjectKey{Namespace: argocd, Name: name}, name+" compared", func(a *v1alpha1.Application) bool {
			return a.Status.Sync.Status == v1alpha1.SyncStatusCodeOutOfSync
		})
	}

	pushed := repo.Commit(map[string]string{names[0] + "/b.yaml": strings.ReplaceAll(configMapYAML, "%s", "b")})
	before := asks.Load()
	if err := r.RefreshApps(ctx, repo.URL(), names); err != nil {
		t.Fatal(err)
	}
	for _, name := range names {
		waitApp(t, c, client.ObjectKey{Namespace: argocd, Name: name}, name+" compared at the pushed commit", func(a *v1alpha1.Application) bool {
			return a.Status.Sync.Revision == pushed
		})
	}
	// One ask; a second may come from an app's own poll falling due (its
	// first is spread over the period) before the refresh's answer.
	if n := asks.Load() - before; n > 2 {
		t.Errorf("the refresh of %d apps asked git %d times, want once (twice at most)", len(names), n)
	}
}
