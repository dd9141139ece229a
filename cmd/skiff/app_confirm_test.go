package main

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/skiffcd/skiff/api/v1alpha1"
	"github.com/skiffcd/skiff/internal/testgit"
)

// confirm-deletion approves, as of now, the prunes and deletions that wait
// for a confirmation: it writes the deletion-approved annotation.
func TestAppConfirmDeletion(t *testing.T) {
	t.Parallel()
	c := kube(t)
	repo := testgit.New(t)
	repo.Commit(map[string]string{"app/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm}\n"})
	app := &v1alpha1.Application{
		ObjectMeta: metav1.ObjectMeta{Name: "confirm", Namespace: appNamespace},
		Spec: v1alpha1.ApplicationSpec{
			Project:     "default",
			Source:      &v1alpha1.ApplicationSource{RepoURL: repo.URL(), Path: "app", TargetRevision: "HEAD"},
			Destination: v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: cluster.Namespace(t)},
		},
	}
	if err := c.Create(context.Background(), app); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Delete(context.Background(), app) })

	before := time.Now()
	wantContains(t, mustSkiff(t, "confirm-deletion", "confirm"), "Application 'confirm' updated successfully")
	got := getApp(t, c, "confirm")
	if !got.DeletionApproved(before) || got.DeletionApproved(time.Now().Add(2*time.Second)) {
		t.Errorf("approval %q, want the time of the command", got.Annotations[v1alpha1.AnnotationDeletionApproved])
	}
	if _, err := skiff(t, "confirm-deletion", "no-such-app"); err == nil {
		t.Error("confirm-deletion of a missing app succeeded")
	}
}

// Through the API server, confirm-deletion releases a sync held before the
// prune of a Prune=confirm object, as with --core: it updates the app, so a
// read-only user is refused with Argo CD's permission, applications,
// update, and the held sync goes on only once the admin confirms.
func TestAppConfirmDeletionThroughAPIServer(t *testing.T) {
	t.Parallel()
	c := kube(t)
	srv := startAPIServer(t, appNamespace)
	addViewer(t, c, appNamespace, "confirm-viewer", "viewer-password")
	admin := filepath.Join(t.TempDir(), "admin")
	viewer := filepath.Join(t.TempDir(), "viewer")
	if out, err := runSkiff("login", srv.addr, "--password", srv.password, "--insecure-skip-tls-verify", "--config", admin); err != nil {
		t.Fatalf("login as admin: %v\n%s", err, out)
	}
	if out, err := runSkiff("login", srv.addr, "--username", "confirm-viewer", "--password", "viewer-password", "--insecure-skip-tls-verify", "--config", viewer); err != nil {
		t.Fatalf("login as viewer: %v\n%s", err, out)
	}
	asAdmin := func(args ...string) (string, error) {
		return runSkiff(append([]string{"app", "--config", admin}, args...)...)
	}
	mustAdmin := mustWith(t, asAdmin)

	const name = "confirm-via-server"
	dest := cluster.Namespace(t)
	repo := testgit.New(t)
	repo.Commit(map[string]string{
		"app/kept.yaml":     "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: kept}\n",
		"app/precious.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: precious, annotations: {argocd.argoproj.io/sync-options: Prune=confirm}}\n",
	})
	mustAdmin("create", name, "--repo", repo.URL(), "--path", "app", "--dest-namespace", dest)
	t.Cleanup(func() {
		_ = c.Delete(context.Background(), &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: appNamespace}})
	})
	mustAdmin("sync", name, "--timeout", "60s")
	// The revision by name: HEAD may be resolved from the server's cache.
	sha := repo.Commit(map[string]string{"app/precious.yaml": ""})
	mustAdmin("sync", name, "--prune", "--async", "--revision", sha)
	const held = "waiting for pruning confirmation of v1/ConfigMap/precious"
	waitFor(t, "the sync to wait for the confirmation", func() error {
		if s := getApp(t, c, name).Status.OperationState; s == nil || s.Phase != v1alpha1.OperationRunning || s.Message != held {
			return fmt.Errorf("operation %+v", s)
		}
		return nil
	})

	out, err := runSkiff("app", "--config", viewer, "confirm-deletion", name)
	if err == nil || !strings.Contains(err.Error(), "permission denied: applications, update, default/"+name) {
		t.Fatalf("confirm-deletion as a read-only user: got %v, want the server's refusal\n%s", err, out)
	}
	if got := getApp(t, c, name); got.Annotations[v1alpha1.AnnotationDeletionApproved] != "" {
		t.Fatalf("a refused confirmation approved the deletion: %q", got.Annotations[v1alpha1.AnnotationDeletionApproved])
	}
	wantContains(t, mustAdmin("confirm-deletion", name), "Application '"+name+"' updated successfully")
	waitFor(t, "the held sync to prune and succeed", func() bool {
		s := getApp(t, c, name).Status.OperationState
		return s != nil && s.Phase == v1alpha1.OperationSucceeded
	})
	var cm corev1.ConfigMap
	if err := c.Get(context.Background(), client.ObjectKey{Namespace: dest, Name: "precious"}, &cm); !apierrors.IsNotFound(err) {
		t.Errorf("precious after the confirmed sync: %v, want it pruned", err)
	}
}
