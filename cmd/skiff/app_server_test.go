package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/crypto/bcrypt"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/skiffcd/skiff/api/v1alpha1"
	"github.com/skiffcd/skiff/internal/server"
	"github.com/skiffcd/skiff/internal/testgit"
)

// The flow of TestAppLifecycle after `skiff login`, through the real API
// server (serving appNamespace, where the controller runs): create, list,
// get, sync, wait, diff, manifests, history, rollback, set, delete and
// terminate-op work as with --core; a read-only user may list but not
// sync; a bad token asks for a login.
func TestAppThroughAPIServer(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := kube(t)
	srv := startAPIServer(t, appNamespace)
	addr, password := srv.addr, srv.password
	addViewer(t, c, appNamespace, "viewer", "viewer-password")

	admin := filepath.Join(t.TempDir(), "admin")
	viewer := filepath.Join(t.TempDir(), "viewer")
	if out, err := runSkiff("login", addr, "--password", password, "--insecure-skip-tls-verify", "--config", admin); err != nil {
		t.Fatalf("login as admin: %v\n%s", err, out)
	}
	if out, err := runSkiff("login", addr, "--username", "viewer", "--password", "viewer-password", "--insecure-skip-tls-verify", "--config", viewer); err != nil {
		t.Fatalf("login as viewer: %v\n%s", err, out)
	}
	// No --core and no --kubeconfig: the saved session decides.
	asAdmin := func(args ...string) (string, error) {
		return runSkiff(append([]string{"app", "--config", admin}, args...)...)
	}
	mustAdmin := mustWith(t, asAdmin)

	dest := cluster.Namespace(t)
	repo := testgit.New(t)
	first := repo.Commit(map[string]string{"app/cm.yaml": configMapV1, "app/secret.yaml": secretYAML})
	url := repo.URL()
	const name = "via-server"
	create := []string{"create", name, "--repo", url, "--path", "app", "--dest-namespace", dest}
	wantContains(t, mustAdmin(create...), "application '"+name+"' created")
	wantContains(t, mustAdmin(create...), "application '"+name+"' unchanged")
	if _, err := asAdmin(append(create, "--revision", "main")...); err == nil || !strings.Contains(err.Error(), "--upsert") {
		t.Errorf("create over a different spec: got %v, want a hint at --upsert", err)
	}
	if app := getApp(t, c, name); app.Spec.Source.Path != "app" || app.Spec.Destination.Namespace != dest || app.Spec.Project != "default" {
		t.Errorf("spec created through the server: %+v", app.Spec)
	}
	waitFor(t, "the first comparison", func() bool {
		return getApp(t, c, name).Status.Sync.Status == v1alpha1.SyncStatusCodeOutOfSync
	})

	wantContains(t, mustAdmin("list"), "NAME", "SYNCPOLICY", name, dest, "OutOfSync", "Manual", url)
	wantContains(t, mustAdmin("get", name), "Name:", "argocd/"+name, "Sync Status:", "OutOfSync to HEAD ("+first[:7]+")", "ConfigMap", "settings")
	wantContains(t, mustAdmin("get", name, "-o", "json"), `"path": "app"`)

	out, err := runSkiff("app", "--config", viewer, "list", "-o", "name")
	if err != nil || !strings.Contains(out, name) {
		t.Errorf("list as viewer: %v\n%s", err, out)
	}
	out, err = runSkiff("app", "--config", viewer, "get", name, "--refresh")
	if err != nil || !strings.Contains(out, "argocd/"+name) {
		t.Errorf("get --refresh as viewer: %v\n%s", err, out)
	}
	out, err = runSkiff("app", "--config", viewer, "sync", name)
	if err == nil || !strings.Contains(err.Error(), "permission denied: applications, sync, default/"+name) {
		t.Errorf("sync as viewer: got %v, want the server's 403 message\n%s", err, out)
	}
	out, err = runSkiff("app", "--server", addr, "--insecure", "--auth-token", "not-a-token", "list")
	if err == nil || err.Error() != "not logged in or session expired: run skiff login" {
		t.Errorf("list with a bad token: got %v, want a hint to log in\n%s", err, out)
	}
	if _, err := asAdmin("get", "no-such-app"); err == nil || !strings.Contains(err.Error(), "application no-such-app not found") {
		t.Errorf("get of a missing app: %v", err)
	}

	out = mustAdmin("sync", name, "--timeout", "60s")
	wantContains(t, out, "Phase:", "Succeeded", "ConfigMap", "Synced")
	if srv.streams.Load() == 0 {
		t.Error("the sync did not follow the application stream")
	}
	var cm corev1.ConfigMap
	if err := c.Get(ctx, client.ObjectKey{Namespace: dest, Name: "settings"}, &cm); err != nil || cm.Data["level"] != "info" {
		t.Fatalf("ConfigMap after sync: %v %v", err, cm.Data)
	}
	out = mustAdmin("wait", name, "--health", "--sync", "--timeout", "60s")
	wantContains(t, out, "Synced to HEAD", "Healthy")

	out, err = asAdmin("diff", name)
	if err != nil || strings.Contains(out, "=====") {
		t.Fatalf("diff of a synced app through the server: %v\n%s", err, out)
	}
	changeSecretByHand(t, c, dest)
	out, err = asAdmin("diff", name)
	if code, silent := silentExit(err); !silent || code != 1 {
		t.Fatalf("diff with a changed Secret through the server: got %v, want a silent exit 1\n%s", err, out)
	}
	wantContains(t, out, "===== /Secret "+dest+"/db ======", "++++++++")
	manifests := mustAdmin("manifests", name)
	wantContains(t, manifests, "name: settings", "level: info", "password: ++++++++")
	out += manifests
	for _, secretValue := range []string{"hunter2", "changed-by-hand", "aHVudGVyMg", "Y2hhbmdlZC1ieS1oYW5k"} {
		if strings.Contains(out, secretValue) {
			t.Errorf("the server's diff or manifests show the Secret value %q:\n%s", secretValue, out)
		}
	}
	mustAdmin("sync", name, "--timeout", "60s")
	// A settled app prints the same through the server as with --core.
	waitFor(t, "the same get output in both modes", func() error {
		return sameOutput(func() (string, error) { return asAdmin("get", name) },
			func() (string, error) { return skiff(t, "get", name) })
	})

	second := repo.Commit(map[string]string{"app/cm.yaml": configMapV2})
	mustAdmin("sync", name, "--revision", second, "--timeout", "60s")
	wantContains(t, mustAdmin("history", name), "ID", "DATE", "REVISION", first, second)

	wantContains(t, mustAdmin("rollback", name, "--timeout", "60s"), "Succeeded")
	if err := c.Get(ctx, client.ObjectKey{Namespace: dest, Name: "settings"}, &cm); err != nil || cm.Data["level"] != "info" {
		t.Errorf("ConfigMap after rollback: %v %v, want level info", err, cm.Data)
	}
	// Syncs at first, first again (after the diff), second, and the rollback.
	if h := getApp(t, c, name).Status.History; len(h) != 4 || h[3].Revision != first || h[3].InitiatedBy.Username != "admin" {
		t.Errorf("history after rollback %+v, want a fourth entry at %s by admin", h, first)
	}
	wantContains(t, mustAdmin("set", name, "--sync-policy", "automated"), "updated")
	if !getApp(t, c, name).IsAutomated() {
		t.Error("set through the server left automated sync off")
	}
	if _, err := asAdmin("rollback", name, "0"); err == nil || !strings.Contains(err.Error(), "auto-sync is enabled") {
		t.Errorf("rollback with automated sync through the server: got %v, want a refusal", err)
	}

	wantContains(t, mustAdmin("delete", name, "-y"), "application '"+name+"' deleted")
	waitGone(t, c, "the application and its resources to go",
		&v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Namespace: appNamespace, Name: name}},
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: dest, Name: "settings"}})

	terminateFlow(t, "stuck-via-server", asAdmin)
}

// addViewer adds a local user with role:readonly to the API server's
// settings in ns, as an operator would in argocd-cm, argocd-secret and
// argocd-rbac-cm. Tests running in parallel add theirs to the same
// objects: each keeps the others' policy lines, and a conflict reads
// again.
func addViewer(t *testing.T, c client.Client, ns, user, password string) {
	t.Helper()
	ctx := context.Background()
	hash, err := bcrypt.GenerateFromPassword([]byte(password), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		var secret corev1.Secret
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: server.SecretName}, &secret); err != nil {
			return err
		}
		secret.Data["accounts."+user+".password"] = hash
		return c.Update(ctx, &secret)
	})
	if err != nil {
		t.Fatal(err)
	}
	policy := "g, " + user + ", role:readonly\n"
	for name, edit := range map[string]func(map[string]string){
		server.ConfigMapName: func(d map[string]string) { d["accounts."+user] = "login" },
		server.RBACConfigMapName: func(d map[string]string) {
			if !strings.Contains(d["policy.csv"], policy) {
				d["policy.csv"] += policy
			}
		},
	} {
		err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
			err := c.Get(ctx, client.ObjectKeyFromObject(cm), cm)
			if apierrors.IsNotFound(err) {
				cm.Data = map[string]string{}
				edit(cm.Data)
				err = c.Create(ctx, cm)
				if apierrors.IsAlreadyExists(err) {
					return apierrors.NewConflict(corev1.Resource("configmaps"), name, err)
				}
				return err
			}
			if err != nil {
				return err
			}
			if cm.Data == nil {
				cm.Data = map[string]string{}
			}
			edit(cm.Data)
			return c.Update(ctx, cm)
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}
