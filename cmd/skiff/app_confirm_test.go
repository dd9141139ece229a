package main

import (
	"context"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

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
