package clustercache

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"

	"github.com/skiffcd/skiff/internal/testwait"
)

// A cache limited to a namespace (skiff server --namespaced) holds that
// namespace's objects only and watches no cluster-scoped kind, so a
// ServiceAccount with a Role there can run it.
func TestANamespacedCacheSeesOnlyItsNamespace(t *testing.T) {
	ctx := context.Background()
	own, other := cluster.Namespace(t), cluster.Namespace(t)
	c, _ := startCacheWith(t, Options{Namespace: own})
	client := kubernetes.NewForConfigOrDie(cluster.Config)
	for _, ns := range []string{own, other} {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "settings", Namespace: ns}}
		if _, err := client.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	key := func(ns string) ResourceKey { return ResourceKey{Kind: "ConfigMap", Namespace: ns, Name: "settings"} }
	testwait.Eventually(t, "the ConfigMap of its namespace", func() bool {
		_, ok := c.Get(key(own))
		return ok
	})
	if _, ok := c.Get(key(other)); ok {
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
