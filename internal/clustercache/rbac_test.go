package clustercache

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/skiffcd/skiff/internal/testcluster"
	"github.com/skiffcd/skiff/internal/testwait"
)

var secretKind = schema.GroupKind{Kind: "Secret"}

// Credentials that may not list Secrets cluster-wide keep a cache without
// resource.respectRBAC from filling, and its watch status names the
// refused list; switched to normal, the cache skips Secrets at once and
// fills, holding the other kinds' objects.
func TestWithoutRespectRBACARefusedKindIsNamedAndNormalSkipsIt(t *testing.T) {
	ns := cluster.Namespace(t)
	createConfigMaps(t, ns)
	var mode atomic.Value
	mode.Store("")
	c, err := New(cluster.ConfigWithout(t, ns, "secrets"), Options{RespectRBAC: func() string { return mode.Load().(string) }})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	started := make(chan error, 1)
	go func() { started <- c.Start(ctx) }()

	testwait.Eventually(t, "the refused list of Secrets named", func() error {
		failing := c.WatchStatus().Failing
		if len(failing) == 1 && strings.Contains(failing[0], "listing secrets: ") && strings.Contains(failing[0], "forbidden") {
			return nil
		}
		return fmt.Errorf("failing watches %v, want the list of secrets refused", failing)
	})
	if c.Synced() {
		t.Fatal("the cache filled without Secrets and without resource.respectRBAC")
	}

	mode.Store(RespectRBACNormal)
	c.RecheckRBAC()
	select {
	case err := <-started:
		if err != nil {
			t.Fatal(err)
		}
	case <-ctx.Done():
		t.Fatal("the cache did not fill once resource.respectRBAC was normal")
	}
	if skipped := c.Skipped(); len(skipped) != 1 || !strings.HasPrefix(skipped[0], "Secret: ") || !strings.Contains(skipped[0], "forbidden") {
		t.Errorf("skipped kinds %v, want Secret refused", skipped)
	}
	if c.Watches(secretKind) {
		t.Error("the cache still watches Secrets")
	}
	if failing := c.WatchStatus().Failing; len(failing) > 0 {
		t.Errorf("failing watches %v once Secrets are skipped, want none", failing)
	}
	testwait.Eventually(t, "the ConfigMap in the cache", func() bool {
		_, ok := c.Get(settingsKey(ns))
		return ok
	})
}

// With resource.respectRBAC set from the start, a cache whose credentials
// may not list Secrets fills, skipping them and saying why: normal after
// the API server refused the list, strict before asking it, by a
// SelfSubjectAccessReview, so nothing is refused. Once a ClusterRole
// permits Secrets, the RBAC change makes the cache try them again and
// watch them.
func TestRespectRBACSkipsAKindTheCredentialsMayNotList(t *testing.T) {
	tests := map[string]struct {
		mode, reason string
		refused      bool
	}{
		"normal skips Secrets once their list is refused": {mode: RespectRBACNormal, reason: "forbidden", refused: true},
		"strict never lists Secrets": {mode: RespectRBACStrict,
			reason: "list secrets cluster-wide is not permitted (SelfSubjectAccessReview)"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			ns := cluster.Namespace(t)
			createConfigMaps(t, ns)
			cfg := rest.CopyConfig(cluster.ConfigWithout(t, ns, "secrets"))
			refused := &testcluster.Refusals{}
			cfg.Wrap(refused.Wrap)
			c, err := New(cfg, Options{RespectRBAC: func() string { return tc.mode }})
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			if err := c.Start(ctx); err != nil {
				t.Fatal(err)
			}
			if skipped := c.Skipped(); len(skipped) != 1 || !strings.HasPrefix(skipped[0], "Secret: ") || !strings.Contains(skipped[0], tc.reason) {
				t.Errorf("skipped kinds %v, want Secret skipped for %q", skipped, tc.reason)
			}
			for _, r := range refused.List() {
				if !tc.refused || !strings.HasPrefix(r, "GET /api/v1/secrets?") {
					t.Errorf("the API server refused %s", r)
				}
			}
			testwait.Eventually(t, "the ConfigMap in the cache", func() bool {
				_, ok := c.Get(settingsKey(ns))
				return ok
			})

			permitSecrets(t, ns)
			testwait.Eventually(t, "Secrets watched once permitted", func() error {
				if !c.Watches(secretKind) || len(c.Skipped()) > 0 {
					return fmt.Errorf("watches Secrets: %v, skipped: %v", c.Watches(secretKind), c.Skipped())
				}
				return nil
			}, testwait.Timeout(time.Minute))
		})
	}
}

// permitSecrets lets the ServiceAccount ConfigWithout made in ns read
// Secrets cluster-wide.
func permitSecrets(t *testing.T, ns string) {
	t.Helper()
	ctx := context.Background()
	client := kubernetes.NewForConfigOrDie(cluster.Config)
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: ns + "-secrets"},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"get", "list", "watch"}}}}
	if _, err := client.RbacV1().ClusterRoles().Create(ctx, role, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	binding := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: role.Name},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: "without-secrets", Namespace: ns}}}
	if _, err := client.RbacV1().ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = client.RbacV1().ClusterRoleBindings().Delete(ctx, binding.Name, metav1.DeleteOptions{})
		_ = client.RbacV1().ClusterRoles().Delete(ctx, role.Name, metav1.DeleteOptions{})
	})
}
