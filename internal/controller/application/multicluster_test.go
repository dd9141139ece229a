package application

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/skiffcd/skiff/api/v1alpha1"
	"github.com/skiffcd/skiff/internal/argocdcm"
	"github.com/skiffcd/skiff/internal/clustercache"
	"github.com/skiffcd/skiff/internal/clusters"
	"github.com/skiffcd/skiff/internal/health"
	"github.com/skiffcd/skiff/internal/kubeclient"
	"github.com/skiffcd/skiff/internal/project"
	"github.com/skiffcd/skiff/internal/syncengine"
	"github.com/skiffcd/skiff/internal/testcluster"
	"github.com/skiffcd/skiff/internal/testgit"
	"github.com/skiffcd/skiff/internal/testwait"
)

// clusterWait bounds the waits that span an API server's restart and the
// informers' back-off before they list again.
const clusterWait = 2 * time.Minute

// Apps in the local cluster and in two clusters registered by cluster
// Secrets (east named by name, west by server) sync, prune and self-heal, each in its own cluster; a project
// that denies west blocks its app there; west's API server stopped leaves
// its app Unknown with a condition while the others stay Synced and
// nothing is pruned, and restarted, the app is Synced again with the
// objects it had, without a restart of the controller. A cluster whose
// registration goes is stopped, its apps invalid and its objects left.
func TestAppsDeployToRegisteredClusters(t *testing.T) {
	ctx := context.Background()
	east, west := startClusters(t)
	argocd := cluster.Namespace(t)
	reg := startSecretsRegistry(t, argocd)
	secrets := map[string]*corev1.Secret{}
	for name, tc := range map[string]*testcluster.Cluster{"east": east, "west": west} {
		secret, err := registered(name, tc).ToSecret(argocd)
		if err != nil {
			t.Fatal(err)
		}
		if err := cluster.Client(t).Create(ctx, secret); err != nil {
			t.Fatal(err)
		}
		secrets[name] = secret
	}
	c, rec := startReconciler(t, argocd, 2*time.Second, func(r *Reconciler) {
		r.Clusters = reg
		r.Connect = testConnector(t)
	})
	clientOf := map[string]client.Client{"local": c, "east": east.Client(t), "west": west.Client(t)}
	dests := map[string]v1alpha1.ApplicationDestination{
		"local": {Server: clusters.InClusterServer, Namespace: cluster.Namespace(t)},
		"east":  {Name: "east", Namespace: east.Namespace(t)},
		"west":  {Server: west.Config.Host, Namespace: west.Namespace(t)},
	}
	repo := testgit.New(t)
	repo.Commit(map[string]string{"cm/a.yaml": configMap("a"), "cm/b.yaml": configMap("b")})
	policy := &v1alpha1.SyncPolicy{Automated: &v1alpha1.SyncPolicyAutomated{Prune: true, SelfHeal: true}}
	keys := map[string]client.ObjectKey{}
	for where, dest := range dests {
		app := newApp(argocd, "mc-"+where, repo.URL(), "cm", "", policy)
		app.Spec.Destination = dest
		if err := c.Create(ctx, app); err != nil {
			t.Fatal(err)
		}
		keys[where] = client.ObjectKeyFromObject(app)
	}
	for where, key := range keys {
		waitApp(t, c, key, "the first sync to "+where, statusIs(v1alpha1.SyncStatusCodeSynced, v1alpha1.HealthStatusHealthy))
	}
	for where, cc := range clientOf {
		wantConfigMaps(t, cc, dests[where].Namespace, "mc-"+where, "a", "b")
	}
	// Each app wrote into its own cluster only.
	for where, cc := range clientOf {
		for other := range dests {
			if other != where {
				wantConfigMaps(t, cc, dests[other].Namespace, "mc-"+other)
			}
		}
	}

	repo.Commit(map[string]string{"cm/b.yaml": ""})
	for where, cc := range clientOf {
		testwait.Eventually(t, "b pruned in "+where, func() error {
			return configMapsAre(cc, dests[where].Namespace, "mc-"+where, "a")
		}, testwait.Timeout(clusterWait))
	}

	westA := &corev1.ConfigMap{}
	if err := clientOf["west"].Get(ctx, client.ObjectKey{Namespace: dests["west"].Namespace, Name: "a"}, westA); err != nil {
		t.Fatal(err)
	}
	if err := clientOf["west"].Delete(ctx, westA); err != nil {
		t.Fatal(err)
	}
	testwait.Eventually(t, "a healed in west", func() error {
		return configMapsAre(clientOf["west"], dests["west"].Namespace, "mc-west", "a")
	}, testwait.Timeout(clusterWait))

	t.Run("a project that denies a cluster blocks its apps there", func(t *testing.T) {
		proj := &v1alpha1.AppProject{Spec: v1alpha1.AppProjectSpec{
			SourceRepos:              []string{"*"},
			Destinations:             []v1alpha1.ApplicationDestination{{Server: "*", Namespace: "*"}, {Name: "!west", Namespace: "*"}},
			ClusterResourceWhitelist: project.Default(argocd).Spec.ClusterResourceWhitelist,
		}}
		proj.Name, proj.Namespace = "not-west", argocd
		if err := c.Create(ctx, proj); err != nil {
			t.Fatal(err)
		}
		app := newApp(argocd, "mc-denied", repo.URL(), "cm", "", policy)
		app.Spec.Project = proj.Name
		app.Spec.Destination = v1alpha1.ApplicationDestination{Name: "west", Namespace: dests["west"].Namespace}
		if err := c.Create(ctx, app); err != nil {
			t.Fatal(err)
		}
		waitApp(t, c, client.ObjectKeyFromObject(app), "the denied app's condition", func(a *v1alpha1.Application) bool {
			return conditionSays(a, v1alpha1.ApplicationConditionInvalidSpecError, "do not match any of the allowed destinations")
		})
		testwait.Consistently(t, "nothing applied for the denied app", 3*time.Second, func() error {
			return configMapsAre(clientOf["west"], dests["west"].Namespace, "mc-denied")
		})
	})

	t.Run("an unreachable cluster leaves its apps Unknown and the others Synced", func(t *testing.T) {
		before := &corev1.ConfigMap{}
		if err := clientOf["west"].Get(ctx, client.ObjectKey{Namespace: dests["west"].Namespace, Name: "a"}, before); err != nil {
			t.Fatal(err)
		}
		west.StopAPIServer()
		waitApp(t, c, keys["west"], "west's app Unknown", func(a *v1alpha1.Application) bool {
			return a.Status.Sync.Status == v1alpha1.SyncStatusCodeUnknown &&
				conditionSays(a, v1alpha1.ApplicationConditionComparisonError, "cluster west is unreachable")
		})
		testwait.Consistently(t, "the other clusters' apps Synced, with their objects", 5*time.Second, func() error {
			for _, where := range []string{"local", "east"} {
				app := &v1alpha1.Application{}
				if err := c.Get(ctx, keys[where], app); err != nil {
					return err
				}
				if app.Status.Sync.Status != v1alpha1.SyncStatusCodeSynced {
					return fmt.Errorf("%s's app is %s", where, app.Status.Sync.Status)
				}
				if err := configMapsAre(clientOf[where], dests[where].Namespace, "mc-"+where, "a"); err != nil {
					return err
				}
			}
			return nil
		})
		if err := west.RestartAPIServer(ctx); err != nil {
			t.Fatal(err)
		}
		testwait.Eventually(t, "west's app Synced again", func() error {
			a := &v1alpha1.Application{}
			if err := c.Get(ctx, keys["west"], a); err != nil {
				return err
			}
			if a.Status.Sync.Status != v1alpha1.SyncStatusCodeSynced || a.Status.Health.Status != v1alpha1.HealthStatusHealthy ||
				conditionSays(a, v1alpha1.ApplicationConditionComparisonError, "") {
				return fmt.Errorf("sync %s, health %s, conditions %+v", a.Status.Sync.Status, a.Status.Health.Status, a.Status.Conditions)
			}
			return nil
		}, testwait.Timeout(clusterWait))
		after := &corev1.ConfigMap{}
		if err := clientOf["west"].Get(ctx, client.ObjectKey{Namespace: dests["west"].Namespace, Name: "a"}, after); err != nil {
			t.Fatal(err)
		}
		if after.UID != before.UID {
			t.Errorf("west's ConfigMap a was deleted and created again (uid %s, then %s)", before.UID, after.UID)
		}
	})

	t.Run("a cluster no longer registered is stopped and its apps invalid", func(t *testing.T) {
		if err := c.Delete(ctx, secrets["west"]); err != nil {
			t.Fatal(err)
		}
		waitApp(t, c, keys["west"], "west's app invalid", func(a *v1alpha1.Application) bool {
			return conditionSays(a, v1alpha1.ApplicationConditionInvalidSpecError, "is not configured")
		})
		rec.remotes.mu.Lock()
		_, running := rec.remotes.byServer[west.Config.Host]
		rec.remotes.mu.Unlock()
		if running {
			t.Error("west's watch cache still runs after its registration went")
		}
		if err := configMapsAre(clientOf["west"], dests["west"].Namespace, "mc-west", "a"); err != nil {
			t.Errorf("west's objects after its registration went: %v", err)
		}
	})
}

// startSecretsRegistry follows the cluster Secrets of ns, as skiff server
// does over its settings cache.
func startSecretsRegistry(t *testing.T, ns string) *clusters.Secrets {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	settings, err := cache.New(cluster.Config, cache.Options{Scheme: testcluster.Scheme(t), DefaultNamespaces: map[string]cache.Config{ns: {}}})
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = settings.Start(ctx) }()
	reg := clusters.NewSecrets(settings, settings, ns)
	go func() { _ = reg.Start(ctx) }()
	return reg
}

// startClusters starts two more control planes, side by side.
func startClusters(t *testing.T) (east, west *testcluster.Cluster) {
	t.Helper()
	var wg sync.WaitGroup
	started := make([]*testcluster.Cluster, 2)
	errs := make([]error, 2)
	for i := range started {
		wg.Go(func() { started[i], errs[i] = testcluster.Start(context.Background(), testcluster.Options{}) })
	}
	wg.Wait()
	for i, c := range started {
		if c != nil {
			t.Cleanup(c.Stop)
		}
		if errs[i] != nil {
			t.Fatal(errs[i])
		}
	}
	return started[0], started[1]
}

// startCluster starts another control plane, stopped when the test ends.
func startCluster(t *testing.T) *testcluster.Cluster {
	t.Helper()
	c, err := testcluster.Start(context.Background(), testcluster.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Stop)
	return c
}

// register writes the cluster Secrets of cs into ns.
func register(t *testing.T, ns string, cs ...clusters.Cluster) {
	t.Helper()
	for _, c := range cs {
		secret, err := c.ToSecret(ns)
		if err != nil {
			t.Fatal(err)
		}
		if err := cluster.Client(t).Create(context.Background(), secret); err != nil {
			t.Fatal(err)
		}
	}
}

// registered is c as its cluster Secret registers it.
func registered(name string, c *testcluster.Cluster) clusters.Cluster {
	return clusters.Cluster{Name: name, Server: c.Config.Host, Config: clusters.Config{
		BearerToken:     c.Config.BearerToken,
		TLSClientConfig: clusters.TLSClientConfig{CAData: c.Config.CAData},
	}}
}

// testConnector builds registered clusters' caches and engines as
// startReconciler builds the local ones.
func testConnector(t *testing.T) Connector {
	return testConnectorWith(t, nil)
}

// testConnectorWith is testConnector whose caches follow settings'
// resource.respectRBAC, as skiff server's do.
func testConnectorWith(t *testing.T, settings *argocdcm.Source) Connector {
	scheme, err := kubeclient.NewScheme()
	if err != nil {
		t.Fatal(err)
	}
	return func(c clusters.Cluster, cfg *rest.Config) (*clustercache.Cache, *syncengine.Engine, error) {
		live, err := clustercache.New(cfg, CacheOptions(c, clustercache.Options{Health: health.StatusText, RespectRBAC: settings.RespectRBAC()}))
		if err != nil {
			return nil, nil, err
		}
		direct, err := client.New(cfg, client.Options{Scheme: scheme})
		if err != nil {
			return nil, nil, err
		}
		return live, &syncengine.Engine{Client: direct, Poll: 100 * time.Millisecond, WaveTimeout: time.Minute,
			Health: func(u *unstructured.Unstructured) (v1alpha1.HealthStatusCode, string) {
				res := health.Assess(u)
				return res.Status, res.Message
			}}, nil
	}
}

func configMap(name string) string {
	return fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: %s\ndata:\n  key: value\n", name)
}

// configMapsAre checks that the ConfigMaps of ns tracked to app are names.
func configMapsAre(c client.Client, ns, app string, names ...string) error {
	list := &corev1.ConfigMapList{}
	if err := c.List(context.Background(), list, client.InNamespace(ns)); err != nil {
		return err
	}
	var got []string
	for _, cm := range list.Items {
		if strings.HasPrefix(cm.Annotations[clustercache.TrackingAnnotation], app+":") {
			got = append(got, cm.Name)
		}
	}
	if strings.Join(got, ",") != strings.Join(names, ",") {
		return fmt.Errorf("ConfigMaps of %s in %s: %v, want %v", app, ns, got, names)
	}
	return nil
}

func wantConfigMaps(t *testing.T, c client.Client, ns, app string, names ...string) {
	t.Helper()
	if err := configMapsAre(c, ns, app, names...); err != nil {
		t.Error(err)
	}
}

// conditionSays reports whether app has a condition of kind whose message
// contains msg.
func conditionSays(app *v1alpha1.Application, kind v1alpha1.ApplicationConditionType, msg string) bool {
	for _, cond := range app.Status.Conditions {
		if cond.Type == kind && strings.Contains(cond.Message, msg) {
			return true
		}
	}
	return false
}
