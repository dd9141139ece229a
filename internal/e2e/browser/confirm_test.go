package browser

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/skiffcd/skiff/api/v1alpha1"
	"github.com/skiffcd/skiff/internal/testgit"
	"github.com/skiffcd/skiff/internal/testwait"
)

// A sync held before the prune of a Prune=confirm object shows a Confirm
// pruning button to who may update the app (not to a readonly user); the
// admin's click, after a confirmation, lets the sync prune and succeed.
func TestConfirmPruning(t *testing.T) {
	const name = "held-prune"
	ctx := context.Background()
	repo := testgit.New(t)
	first := repo.Commit(map[string]string{
		"app/kept.yaml":     "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: kept}\n",
		"app/precious.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: precious, annotations: {argocd.argoproj.io/sync-options: Prune=confirm}}\n",
	})
	dest := env.cluster.Namespace(t)
	app := &v1alpha1.Application{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: argocd},
		Spec: v1alpha1.ApplicationSpec{
			Project:     "default",
			Source:      &v1alpha1.ApplicationSource{RepoURL: repo.URL(), Path: "app", TargetRevision: "HEAD"},
			Destination: v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: dest},
		},
		Operation: &v1alpha1.Operation{Sync: &v1alpha1.SyncOperation{Revision: first}, InitiatedBy: v1alpha1.OperationInitiator{Username: "test"}},
	}
	if err := env.k8s.Create(ctx, app); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.k8s.Delete(context.Background(), app) })
	operationIs := func(phase v1alpha1.OperationPhase, message string) func() error {
		return func() error {
			s := getApp(t, name).Status.OperationState
			if s == nil || s.Phase != phase || (message != "" && s.Message != message) {
				return fmt.Errorf("operation %+v", s)
			}
			return nil
		}
	}
	testwait.Eventually(t, "the first sync", operationIs(v1alpha1.OperationSucceeded, ""), testwait.Timeout(60*time.Second))
	second := repo.Commit(map[string]string{"app/precious.yaml": ""})
	held := getApp(t, name)
	held.Operation = &v1alpha1.Operation{Sync: &v1alpha1.SyncOperation{Revision: second, Prune: true}, InitiatedBy: v1alpha1.OperationInitiator{Username: "test"}}
	if err := env.k8s.Update(ctx, held); err != nil {
		t.Fatal(err)
	}
	testwait.Eventually(t, "the sync to wait for the confirmation",
		operationIs(v1alpha1.OperationRunning, "waiting for pruning confirmation of v1/ConfigMap/precious"), testwait.Timeout(60*time.Second))

	p := newPage(t, 1400, 900)
	addReadonlyUser(t, "ro-confirm", "ro-password-1")
	p.login("ro-confirm", "ro-password-1")
	p.open("/applications/" + name)
	p.until("the permissions to load", attrIs(tid("app-actions"), "data-perms", "loaded"), 15*time.Second)
	p.visible(tid("operation-phase")+`[data-status="Running"]`, 15*time.Second)
	if p.exists(tid("confirm-deletion-button")) {
		t.Error("a readonly user sees the Confirm pruning button")
	}
	p.click(tid("logout"))
	p.visible(tid("login-page"), 10*time.Second)

	p.login("admin", env.password)
	p.open("/applications/" + name)
	p.visible(tid("confirm-deletion-button")+`[data-what="pruning"]`, 15*time.Second)
	if got := p.text(tid("confirm-deletion-button")); got != "Confirm pruning" {
		t.Errorf("button %q, want Confirm pruning", got)
	}
	p.screenshot("01-held")
	p.click(tid("confirm-deletion-button"))
	p.visible(tid("confirm-deletion-dialog"), 10*time.Second)
	p.click(tid("dialog-confirm"))
	p.visible(tid("operation-phase")+`[data-status="Succeeded"]`, 60*time.Second)
	p.until("the button gone", `document.querySelector('[data-testid="confirm-deletion-button"]') === null`, 15*time.Second)
	p.screenshot("02-confirmed")
	testwait.Eventually(t, "precious pruned", func() error {
		err := env.k8s.Get(ctx, client.ObjectKey{Namespace: dest, Name: "precious"}, &corev1.ConfigMap{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		return errors.Join(err, errors.New("precious is still there"))
	}, testwait.Timeout(30*time.Second))
	if got := getApp(t, name).Annotations[v1alpha1.AnnotationDeletionApproved]; got == "" {
		t.Error("no deletion-approved annotation after the confirmation")
	}
}
