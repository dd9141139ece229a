package clusterops

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	authv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/skiffcd/skiff/internal/clusters"
	"github.com/skiffcd/skiff/internal/testcluster"
	"github.com/skiffcd/skiff/internal/testwait"
)

// TestAddAndRotateAuthOnASecondControlPlane registers a real second
// control plane as `skiff cluster add` does and rotates its token.
func TestAddAndRotateAuthOnASecondControlPlane(t *testing.T) {
	ctx := context.Background()
	second, err := testcluster.Start(ctx, testcluster.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(second.Stop)
	admin, err := Connect(second.Config, nil)
	if err != nil {
		t.Fatal(err)
	}
	ops, _ := newOps(t)

	token, err := InstallManager(ctx, admin, nil, TokenWait)
	if err != nil {
		t.Fatal(err)
	}
	var role rbacv1.ClusterRole
	var binding rbacv1.ClusterRoleBinding
	var sa corev1.ServiceAccount
	for key, obj := range map[types.NamespacedName]client.Object{
		{Name: ManagerRole}:        &role,
		{Name: ManagerRoleBinding}: &binding,
		{Namespace: ManagerNamespace, Name: ManagerServiceAccount}: &sa,
	} {
		if err := admin.Get(ctx, key, obj); err != nil {
			t.Errorf("%T %s: %v", obj, key, err)
		}
	}
	if len(role.Rules) != 2 || binding.RoleRef.Name != ManagerRole || len(binding.Subjects) != 1 || binding.Subjects[0].Name != ManagerServiceAccount {
		t.Errorf("role %+v, binding %+v", role.Rules, binding)
	}
	// Adding again (--upsert) keeps one binding and makes a second token.
	if _, err := InstallManager(ctx, admin, nil, TokenWait); err != nil {
		t.Fatalf("installing again: %v", err)
	}
	if n := managerTokens(t, admin); n != 2 {
		t.Errorf("%d token Secrets after two adds, want 2", n)
	}

	added, err := Added(second.Config, token)
	if err != nil {
		t.Fatal(err)
	}
	added.Name = "second"
	if _, err := ops.Save(ctx, added, false); err != nil {
		t.Fatal(err)
	}

	// A client from the cluster Secret alone reaches the target as
	// argocd-manager and may do what its ClusterRole allows.
	stored := storedCluster(t, ops, "second")
	cfg, err := stored.RESTConfig(nil)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.BearerToken != token || len(cfg.CertData) > 0 {
		t.Fatal("the stored cluster does not use the argocd-manager token alone")
	}
	manager := kubernetes.NewForConfigOrDie(cfg)
	if _, err := manager.CoreV1().Pods("").List(ctx, metav1.ListOptions{}); err != nil {
		t.Fatalf("listing pods with the stored credentials: %v", err)
	}
	for _, attrs := range []authv1.ResourceAttributes{
		{Verb: "create", Group: "rbac.authorization.k8s.io", Resource: "clusterroles"},
		{Verb: "delete", Resource: "nodes"},
		{Verb: "patch", Group: "apps", Resource: "deployments", Namespace: "web"},
		{Verb: "escalate", Group: "argoproj.io", Resource: "rollouts", Namespace: "x"},
	} {
		review, err := manager.AuthorizationV1().SelfSubjectAccessReviews().Create(ctx,
			&authv1.SelfSubjectAccessReview{Spec: authv1.SelfSubjectAccessReviewSpec{ResourceAttributes: &attrs}}, metav1.CreateOptions{})
		if err != nil || !review.Status.Allowed {
			t.Errorf("argocd-manager may not %s %s: %v %+v", attrs.Verb, attrs.Resource, err, review.Status)
		}
	}
	review, err := manager.AuthorizationV1().SelfSubjectAccessReviews().Create(ctx, &authv1.SelfSubjectAccessReview{Spec: authv1.SelfSubjectAccessReviewSpec{
		NonResourceAttributes: &authv1.NonResourceAttributes{Path: "/metrics", Verb: "get"}}}, metav1.CreateOptions{})
	if err != nil || !review.Status.Allowed {
		t.Errorf("argocd-manager may not get /metrics: %v", err)
	}

	rotated, err := ops.RotateAuth(ctx, "second", TokenWait)
	if err != nil {
		t.Fatal(err)
	}
	if rotated.Config.BearerToken == token {
		t.Error("RotateAuth answered with the token")
	}
	newCfg, err := storedCluster(t, ops, "second").RESTConfig(nil)
	if err != nil {
		t.Fatal(err)
	}
	if newCfg.BearerToken == token {
		t.Fatal("the cluster Secret still holds the old token")
	}
	if _, err := kubernetes.NewForConfigOrDie(newCfg).CoreV1().Namespaces().List(ctx, metav1.ListOptions{}); err != nil {
		t.Errorf("the new token: %v", err)
	}
	if n := managerTokens(t, admin); n != 1 {
		t.Errorf("%d token Secrets after rotation, want the new one only", n)
	}
	old := kubernetes.NewForConfigOrDie(cfg)
	testwait.Eventually(t, "the old token to be refused", func() error {
		_, err := old.CoreV1().Namespaces().List(ctx, metav1.ListOptions{})
		if !apierrors.IsUnauthorized(err) {
			return fmt.Errorf("old token: %v, want 401", err)
		}
		return nil
	}, testwait.Timeout(30*time.Second))
}

func TestInstallManagerWithNamespaces(t *testing.T) {
	ctx := context.Background()
	admin, err := Connect(cluster.Config, nil)
	if err != nil {
		t.Fatal(err)
	}
	ns := cluster.Namespace(t)
	token, err := InstallManager(ctx, admin, []string{ns}, TokenWait)
	if err != nil {
		t.Fatal(err)
	}
	var role rbacv1.Role
	if err := admin.Get(ctx, types.NamespacedName{Namespace: ns, Name: ManagerRole}, &role); err != nil {
		t.Fatal(err)
	}
	cfg := rest.AnonymousClientConfig(cluster.Config)
	cfg.BearerToken = token
	c := kubernetes.NewForConfigOrDie(cfg)
	if _, err := c.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{}); err != nil {
		t.Errorf("listing ConfigMaps of %s with the token: %v", ns, err)
	}
	if _, err := c.CoreV1().ConfigMaps("default").List(ctx, metav1.ListOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("listing ConfigMaps of default: %v, want forbidden", err)
	}
}

func managerTokens(t *testing.T, c client.Client) int {
	t.Helper()
	var secrets corev1.SecretList
	if err := c.List(context.Background(), &secrets, client.InNamespace(ManagerNamespace)); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, s := range secrets.Items {
		if s.Type == corev1.SecretTypeServiceAccountToken && s.Annotations[corev1.ServiceAccountNameKey] == ManagerServiceAccount {
			n++
		}
	}
	return n
}

// storedCluster reads the cluster Secret as the registry does.
func storedCluster(t *testing.T, ops Ops, name string) clusters.Cluster {
	t.Helper()
	snap, err := ops.Snapshot(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	c, err := find(snap, name)
	if err != nil {
		t.Fatal(errors.Join(err, fmt.Errorf("%v", snap.Invalid)))
	}
	return c
}
