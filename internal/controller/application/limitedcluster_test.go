package application

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/skiffcd/skiff/api/v1alpha1"
	"github.com/skiffcd/skiff/internal/clustercache"
	"github.com/skiffcd/skiff/internal/clusterops"
	"github.com/skiffcd/skiff/internal/clusters"
	"github.com/skiffcd/skiff/internal/syncengine"
	"github.com/skiffcd/skiff/internal/testcluster"
	"github.com/skiffcd/skiff/internal/testgit"
	"github.com/skiffcd/skiff/internal/testwait"
)

// A cluster registered with `namespaces` (what `skiff cluster add
// --namespace` makes: argocd-manager with Roles in those namespaces only)
// takes apps: its watch cache reads only those namespaces, so nothing
// Skiff asks that cluster is refused; an app deploying there syncs, prunes
// and self-heals, and an app whose render holds a cluster-scoped object is
// refused with the condition that names the cluster's limits, applying
// nothing.
func TestAppsDeployToAClusterLimitedToNamespaces(t *testing.T) {
	ctx := context.Background()
	target := startCluster(t)
	web, jobs := target.Namespace(t), target.Namespace(t)
	admin := target.Client(t)
	token, err := clusterops.InstallManager(ctx, admin, []string{web, jobs}, clusterops.TokenWait)
	if err != nil {
		t.Fatal(err)
	}
	limited := registered("limited", target)
	limited.Config.BearerToken = token
	limited.Namespaces = []string{web, jobs}

	argocd := cluster.Namespace(t)
	reg := startSecretsRegistry(t, argocd)
	register(t, argocd, limited)
	refused := &testcluster.Refusals{}
	connect := testConnector(t)
	c, _ := startReconciler(t, argocd, 2*time.Second, func(r *Reconciler) {
		r.Clusters = reg
		r.Connect = func(cl clusters.Cluster, cfg *rest.Config) (*clustercache.Cache, *syncengine.Engine, error) {
			cfg = rest.CopyConfig(cfg)
			cfg.Wrap(refused.Wrap)
			return connect(cl, cfg)
		}
	})

	repo := testgit.New(t)
	repo.Commit(map[string]string{"cm/a.yaml": configMap("a"), "cm/b.yaml": configMap("b"),
		"scoped/a.yaml": configMap("a"), "scoped/ns.yaml": "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: " + jobs + "-more\n"})
	policy := &v1alpha1.SyncPolicy{Automated: &v1alpha1.SyncPolicyAutomated{Prune: true, SelfHeal: true}}
	app := newApp(argocd, "lim-web", repo.URL(), "cm", "", policy)
	app.Spec.Destination = v1alpha1.ApplicationDestination{Name: "limited", Namespace: web}
	if err := c.Create(ctx, app); err != nil {
		t.Fatal(err)
	}
	key := client.ObjectKeyFromObject(app)
	waitApp(t, c, key, "the first sync", statusIs(v1alpha1.SyncStatusCodeSynced, v1alpha1.HealthStatusHealthy))
	wantConfigMaps(t, admin, web, "lim-web", "a", "b")

	repo.Commit(map[string]string{"cm/b.yaml": ""})
	testwait.Eventually(t, "b pruned", func() error {
		return configMapsAre(admin, web, "lim-web", "a")
	}, testwait.Timeout(clusterWait))

	a := &corev1.ConfigMap{}
	if err := admin.Get(ctx, client.ObjectKey{Namespace: web, Name: "a"}, a); err != nil {
		t.Fatal(err)
	}
	if err := admin.Delete(ctx, a); err != nil {
		t.Fatal(err)
	}
	testwait.Eventually(t, "a healed", func() error {
		return configMapsAre(admin, web, "lim-web", "a")
	}, testwait.Timeout(clusterWait))

	scoped := newApp(argocd, "lim-scoped", repo.URL(), "scoped", "", policy)
	scoped.Spec.Destination = v1alpha1.ApplicationDestination{Name: "limited", Namespace: jobs}
	if err := c.Create(ctx, scoped); err != nil {
		t.Fatal(err)
	}
	waitApp(t, c, client.ObjectKeyFromObject(scoped), "the cluster-scoped object refused", func(a *v1alpha1.Application) bool {
		return conditionSays(a, v1alpha1.ApplicationConditionInvalidSpecError,
			"Namespace "+jobs+"-more is cluster-scoped: cluster limited is limited to namespaces "+web+", "+jobs)
	})
	testwait.Consistently(t, "nothing applied for the refused app", 3*time.Second, func() error {
		return configMapsAre(admin, jobs, "lim-scoped")
	})
	if got := refused.List(); len(got) > 0 {
		t.Errorf("the limited cluster refused %d requests: %v", len(got), got)
	}
}
