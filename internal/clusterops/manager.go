package clusterops

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// What `argocd cluster add` creates in the target cluster, by Argo CD's
// names: a ServiceAccount, its ClusterRole and binding (or a Role and
// binding per namespace), and a long-lived token Secret.
const (
	ManagerServiceAccount = "argocd-manager"
	ManagerNamespace      = "kube-system"
	ManagerRole           = "argocd-manager-role"
	ManagerRoleBinding    = "argocd-manager-role-binding"
	managerTokenPrefix    = "argocd-manager-token-"
)

// ManagerRules is what the argocd-manager role grants: everything; with
// namespaces, everything in them (non-resource URLs are cluster-wide only).
func ManagerRules(namespaced bool) []rbacv1.PolicyRule {
	rules := []rbacv1.PolicyRule{{APIGroups: []string{"*"}, Resources: []string{"*"}, Verbs: []string{"*"}}}
	if !namespaced {
		rules = append(rules, rbacv1.PolicyRule{NonResourceURLs: []string{"*"}, Verbs: []string{"*"}})
	}
	return rules
}

// InstallManager creates (or brings up to date) the ServiceAccount and its
// roles in the target cluster, then a new token Secret, and returns the
// token once the token controller has filled it in, waiting at most
// tokenWait.
func InstallManager(ctx context.Context, target client.Client, namespaces []string, tokenWait time.Duration) (string, error) {
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: ManagerServiceAccount, Namespace: ManagerNamespace}}
	if err := createOrKeep(ctx, target, sa); err != nil {
		return "", err
	}
	subject := []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: ManagerServiceAccount, Namespace: ManagerNamespace}}
	if len(namespaces) == 0 {
		role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: ManagerRole}, Rules: ManagerRules(false)}
		binding := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: ManagerRoleBinding}, Subjects: subject,
			RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: ManagerRole}}
		if err := createOrUpdate(ctx, target, role, func() { role.Rules = ManagerRules(false) }); err != nil {
			return "", err
		}
		if err := createOrUpdate(ctx, target, binding, func() { binding.Subjects = subject }); err != nil {
			return "", err
		}
	}
	for _, ns := range namespaces {
		role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: ManagerRole, Namespace: ns}, Rules: ManagerRules(true)}
		binding := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: ManagerRoleBinding, Namespace: ns}, Subjects: subject,
			RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: ManagerRole}}
		if err := createOrUpdate(ctx, target, role, func() { role.Rules = ManagerRules(true) }); err != nil {
			return "", err
		}
		if err := createOrUpdate(ctx, target, binding, func() { binding.Subjects = subject }); err != nil {
			return "", err
		}
	}
	token, _, err := newToken(ctx, target, tokenWait)
	return token, err
}

// RotateToken gives the argocd-manager ServiceAccount a new token Secret
// and deletes its others, which ends their tokens; it returns the new
// token.
func RotateToken(ctx context.Context, target client.Client, tokenWait time.Duration) (string, error) {
	token, name, err := newToken(ctx, target, tokenWait)
	if err != nil {
		return "", err
	}
	var secrets corev1.SecretList
	if err := target.List(ctx, &secrets, client.InNamespace(ManagerNamespace)); err != nil {
		return "", fmt.Errorf("listing the token Secrets of %s/%s: %w", ManagerNamespace, ManagerServiceAccount, err)
	}
	for _, s := range secrets.Items {
		if s.Name == name || s.Type != corev1.SecretTypeServiceAccountToken || s.Annotations[corev1.ServiceAccountNameKey] != ManagerServiceAccount {
			continue
		}
		if err := target.Delete(ctx, &s); client.IgnoreNotFound(err) != nil {
			return "", fmt.Errorf("deleting the old token Secret %s/%s: %w", s.Namespace, s.Name, err)
		}
	}
	return token, nil
}

// newToken creates a token Secret for argocd-manager and waits for its token.
func newToken(ctx context.Context, target client.Client, tokenWait time.Duration) (token, name string, err error) {
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{GenerateName: managerTokenPrefix, Namespace: ManagerNamespace,
			Annotations: map[string]string{corev1.ServiceAccountNameKey: ManagerServiceAccount}},
		Type: corev1.SecretTypeServiceAccountToken,
	}
	if err := target.Create(ctx, secret); err != nil {
		return "", "", fmt.Errorf("creating a token Secret for %s/%s: %w", ManagerNamespace, ManagerServiceAccount, err)
	}
	key := types.NamespacedName{Namespace: ManagerNamespace, Name: secret.Name}
	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, tokenWait, true, func(ctx context.Context) (bool, error) {
		if err := target.Get(ctx, key, secret); err != nil {
			return false, err
		}
		token = string(secret.Data[corev1.ServiceAccountTokenKey])
		return token != "", nil
	})
	if err != nil {
		return "", "", fmt.Errorf("waiting %s for the token of Secret %s (is the token controller of kube-controller-manager running?): %w", tokenWait, key, err)
	}
	return token, secret.Name, nil
}

// createOrKeep creates obj unless it exists.
func createOrKeep(ctx context.Context, c client.Client, obj client.Object) error {
	if err := c.Create(ctx, obj); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating %T %s: %w", obj, client.ObjectKeyFromObject(obj), err)
	}
	return nil
}

// createOrUpdate creates obj, or reads the existing one and sets what
// set sets on it.
func createOrUpdate(ctx context.Context, c client.Client, obj client.Object, set func()) error {
	err := c.Create(ctx, obj)
	if !apierrors.IsAlreadyExists(err) {
		if err != nil {
			return fmt.Errorf("creating %T %s: %w", obj, client.ObjectKeyFromObject(obj), err)
		}
		return nil
	}
	if err := c.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
		return fmt.Errorf("reading %T %s: %w", obj, client.ObjectKeyFromObject(obj), err)
	}
	set()
	if err := c.Update(ctx, obj); err != nil {
		return fmt.Errorf("updating %T %s: %w", obj, client.ObjectKeyFromObject(obj), err)
	}
	return nil
}
