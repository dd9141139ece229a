package testcluster

import (
	"context"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// ConfigWithout returns a config that reaches the cluster as a new
// ServiceAccount of namespace allowed everything, cluster-wide, but the
// core group's resources withheld (e.g. "secrets"): a ClusterRole naming
// every other resource the API server serves now, since RBAC cannot deny.
// Kinds served later (CRDs installed after) are not allowed either.
func (c *Cluster) ConfigWithout(t testing.TB, namespace string, withheld ...string) *rest.Config {
	t.Helper()
	ctx := context.Background()
	client := kubernetes.NewForConfigOrDie(c.Config)
	groups, err := client.Discovery().ServerGroups()
	if err != nil {
		t.Fatalf("discovering groups: %v", err)
	}
	var others []string
	for _, g := range groups.Groups {
		if g.Name != "" {
			others = append(others, g.Name)
		}
	}
	core, err := client.Discovery().ServerResourcesForGroupVersion("v1")
	if err != nil {
		t.Fatalf("discovering the core resources: %v", err)
	}
	var allowed []string
	for _, r := range core.APIResources {
		if !slices.Contains(withheld, strings.Split(r.Name, "/")[0]) {
			allowed = append(allowed, r.Name)
		}
	}
	name := "without-" + strings.Join(withheld, "-")
	if _, err := client.CoreV1().ServiceAccounts(namespace).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: namespace + "-" + name},
		Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{""}, Resources: allowed, Verbs: []string{"*"}},
			{APIGroups: others, Resources: []string{"*"}, Verbs: []string{"*"}},
			{NonResourceURLs: []string{"*"}, Verbs: []string{"*"}},
		}}
	if _, err := client.RbacV1().ClusterRoles().Create(ctx, role, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	binding := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: role.Name},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: name, Namespace: namespace}}}
	if _, err := client.RbacV1().ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = client.RbacV1().ClusterRoleBindings().Delete(ctx, binding.Name, metav1.DeleteOptions{})
		_ = client.RbacV1().ClusterRoles().Delete(ctx, role.Name, metav1.DeleteOptions{})
	})
	return c.TokenConfig(t, namespace, name)
}
