package clustercache

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/skiffcd/skiff/internal/testwait"
)

// A cache limited to a namespace (skiff server --namespaced) holds that
// namespace's objects only and watches no cluster-scoped kind, so a
// ServiceAccount with a Role there can run it.
func TestANamespacedCacheSeesOnlyItsNamespace(t *testing.T) {
	own, other := cluster.Namespace(t), cluster.Namespace(t)
	c, _ := startCacheWith(t, Options{Namespaces: []string{own}})
	createConfigMaps(t, own, other)
	testwait.Eventually(t, "the ConfigMap of its namespace", func() bool {
		_, ok := c.Get(settingsKey(own))
		return ok
	})
	if _, ok := c.Get(settingsKey(other)); ok {
		t.Errorf("the cache of %s holds the ConfigMap of %s", own, other)
	}
	for _, gk := range []schema.GroupKind{{Kind: "Namespace"}, {Group: "rbac.authorization.k8s.io", Kind: "ClusterRole"}, {Group: "apiextensions.k8s.io", Kind: "CustomResourceDefinition"}} {
		if c.Watches(gk) {
			t.Errorf("the namespaced cache watches the cluster-scoped %s", gk)
		}
	}
	if !c.Watches(schema.GroupKind{Group: "apps", Kind: "Deployment"}) {
		t.Error("the namespaced cache does not watch Deployments")
	}
}

// A cache limited to two namespaces (a cluster Secret's `namespaces`),
// run with the credentials `skiff cluster add --namespace` makes (a Role
// in each of them and nothing else), fills without a refused watch and
// holds both namespaces' objects, tracked ones whole, and no other's.
func TestACacheLimitedToNamespacesRunsWithRolesInThem(t *testing.T) {
	a, b, other := cluster.Namespace(t), cluster.Namespace(t), cluster.Namespace(t)
	cfg := rolesOnlyIn(t, a, b)
	c, err := New(cfg, Options{Namespaces: []string{a, b}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := c.Start(ctx); err != nil {
		t.Fatalf("starting with Roles in %s and %s only: %v", a, b, err)
	}
	if st := c.WatchStatus(); st.LastSync.IsZero() || len(st.Failing) > 0 {
		t.Errorf("watch status after the start: %+v, want a last sync and no failure", st)
	}
	createConfigMaps(t, a, b, other)
	testwait.Eventually(t, "the ConfigMaps of both namespaces", func() bool {
		_, okA := c.Get(settingsKey(a))
		_, okB := c.Get(settingsKey(b))
		return okA && okB
	})
	if _, ok := c.Get(settingsKey(other)); ok {
		t.Errorf("the cache of %s and %s holds the ConfigMap of %s", a, b, other)
	}
	if c.Watches(schema.GroupKind{Kind: "Namespace"}) {
		t.Error("the cache limited to namespaces watches Namespaces")
	}

	// A tracked object upgrades its kind to whole watches, in each namespace.
	client := kubernetes.NewForConfigOrDie(cluster.Config)
	for _, ns := range []string{a, b} {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "tracked", Namespace: ns,
			Annotations: map[string]string{TrackingAnnotation: "web:/ConfigMap:" + ns + "/tracked"}}, Data: map[string]string{"k": "v"}}
		if _, err := client.CoreV1().ConfigMaps(ns).Create(context.Background(), cm, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	testwait.Eventually(t, "both tracked ConfigMaps whole", func() bool {
		objs := c.AppObjects("web")
		if len(objs) != 2 {
			return false
		}
		for _, o := range objs {
			if o.Object["data"] == nil {
				return false
			}
		}
		return true
	})
}

// The same credentials without the limits: the cache cannot fill, and
// its watch status says which lists the API server refused, and why.
func TestRefusedWatchesShowInTheWatchStatus(t *testing.T) {
	ns := cluster.Namespace(t)
	c, err := New(rolesOnlyIn(t, ns), Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { _ = c.Start(ctx) }()
	testwait.Eventually(t, "a refused list of ConfigMaps in the watch status", func() error {
		for _, msg := range c.WatchStatus().Failing {
			if strings.HasPrefix(msg, "listing configmaps: ") && strings.Contains(msg, "forbidden") {
				return nil
			}
		}
		return fmt.Errorf("failing: %v", c.WatchStatus().Failing)
	})
	if c.Synced() {
		t.Error("the cache filled although its lists were refused")
	}
}

// A cache limited to namespaces with ClusterResources watches
// cluster-scoped kinds too.
func TestACacheLimitedToNamespacesWithClusterResources(t *testing.T) {
	ns := cluster.Namespace(t)
	c, _ := startCacheWith(t, Options{Namespaces: []string{ns}, ClusterResources: true})
	if !c.Watches(schema.GroupKind{Kind: "Namespace"}) {
		t.Error("clusterResources: Namespaces are not watched")
	}
	testwait.Eventually(t, "its own Namespace", func() bool {
		_, ok := c.Get(ResourceKey{Kind: "Namespace", Name: ns})
		return ok
	})
}

func settingsKey(ns string) ResourceKey {
	return ResourceKey{Kind: "ConfigMap", Namespace: ns, Name: "settings"}
}

// createConfigMaps creates a ConfigMap "settings" in each namespace.
func createConfigMaps(t *testing.T, namespaces ...string) {
	t.Helper()
	client := kubernetes.NewForConfigOrDie(cluster.Config)
	for _, ns := range namespaces {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "settings", Namespace: ns}}
		if _, err := client.CoreV1().ConfigMaps(ns).Create(context.Background(), cm, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
}

// rolesOnlyIn returns a config that reaches the API server as a
// ServiceAccount allowed everything in namespaces and nothing elsewhere.
func rolesOnlyIn(t *testing.T, namespaces ...string) *rest.Config {
	t.Helper()
	ctx := context.Background()
	client := kubernetes.NewForConfigOrDie(cluster.Config)
	home := namespaces[0]
	if _, err := client.CoreV1().ServiceAccounts(home).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "limited"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, ns := range namespaces {
		role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "everything"},
			Rules: []rbacv1.PolicyRule{{APIGroups: []string{"*"}, Resources: []string{"*"}, Verbs: []string{"*"}}}}
		if _, err := client.RbacV1().Roles(ns).Create(ctx, role, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		binding := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "limited"},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: role.Name},
			Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: "limited", Namespace: home}}}
		if _, err := client.RbacV1().RoleBindings(ns).Create(ctx, binding, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	return cluster.TokenConfig(t, home, "limited")
}
