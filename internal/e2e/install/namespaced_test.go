package install

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/skiffcd/skiff/api/v1alpha1"
	"github.com/skiffcd/skiff/internal/testgit"
	"github.com/skiffcd/skiff/internal/testwait"
)

// namespace-install.yaml, applied with kubectl -n into a namespace of its
// own, runs Skiff (with the Deployment's --namespaced) on Roles alone: its
// app syncs into that namespace; an app deploying to another namespace or
// a cluster-scoped object gets a clear error in its status, and RBAC would
// refuse both anyway.
func TestNamespaceInstallManagesOnlyItsNamespace(t *testing.T) {
	const ns = "team-a"
	applyManifest(t, "namespace-install.yaml", ns)
	args, _, health := serverArgs(t, deployment(t, "namespace-install.yaml"), ns)
	out := startServer(t, serviceAccountKubeconfig(t, ns, "skiff"), args, health)
	c := cluster.Client(t)
	ctx := context.Background()

	repo := testgit.New(t)
	files := testgit.Dir(t, guestbookFixtures, "guestbook")
	files["cluster/cluster-reader.yaml"] = readFile(t, "testdata/cluster-reader.yaml")
	repo.Commit(files)
	newApp := func(name, path, dest string) *v1alpha1.Application {
		app := readApp(t, "namespaced-app.yaml", ns, map[string]string{"NAME": name, "REPO_URL": repo.URL(), "PATH": path, "DEST_NAMESPACE": dest})
		if err := c.Create(ctx, app); err != nil {
			t.Fatal(err)
		}
		return app
	}
	inside := newApp("inside", "guestbook", ns)
	elsewhere := newApp("elsewhere", "guestbook", "default")
	clusterScoped := newApp("cluster-scoped", "cluster", ns)

	waitSynced(t, c, inside)
	for app, says := range map[*v1alpha1.Application]string{
		elsewhere:     `spec.destination.namespace "default": this Skiff is a namespaced install and manages only namespace ` + ns,
		clusterScoped: "ClusterRole namespaced-install-test-reader is cluster-scoped: this Skiff is a namespaced install and manages only namespace " + ns,
	} {
		testwait.Eventually(t, app.Name+"'s InvalidSpecError", func() error {
			got := &v1alpha1.Application{}
			if err := c.Get(ctx, client.ObjectKeyFromObject(app), got); err != nil {
				return err
			}
			for _, cond := range got.Status.Conditions {
				if cond.Type == v1alpha1.ApplicationConditionInvalidSpecError && strings.Contains(cond.Message, says) {
					return nil
				}
			}
			return fmt.Errorf("conditions %+v", got.Status.Conditions)
		}, testwait.Timeout(time.Minute))
	}
	if err := c.Get(ctx, types.NamespacedName{Namespace: "default", Name: "guestbook-ui"}, &appsv1.Deployment{}); !apierrors.IsNotFound(err) {
		t.Errorf("the guestbook Deployment in namespace default: %v, want not found", err)
	}
	if err := c.Get(ctx, types.NamespacedName{Name: "namespaced-install-test-reader"}, &rbacv1.ClusterRole{}); !apierrors.IsNotFound(err) {
		t.Errorf("the ClusterRole from git: %v, want not found", err)
	}

	as := "--as=system:serviceaccount:" + ns + ":skiff"
	for _, q := range []struct {
		args []string
		want string
	}{
		{[]string{"create", "deployments", "-n", ns}, "yes"},
		{[]string{"create", "secrets", "-n", ns}, "yes"},
		{[]string{"create", "deployments", "-n", "default"}, "no"},
		{[]string{"list", "secrets", "-n", "default"}, "no"},
		{[]string{"create", "clusterroles"}, "no"},
		{[]string{"create", "namespaces"}, "no"},
		{[]string{"create", "customresourcedefinitions.apiextensions.k8s.io"}, "no"},
	} {
		if got := strings.TrimSpace(kubectlAnswer(t, append([]string{"auth", "can-i", as}, q.args...)...)); got != q.want {
			t.Errorf("can skiff %s? %s, want %s", strings.Join(q.args, " "), got, q.want)
		}
	}

	noForbidden(t, out)
}
