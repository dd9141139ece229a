package browser

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/skiffcd/skiff/internal/resourceactions"
	"github.com/skiffcd/skiff/internal/testwait"
)

// The resource panel's Actions menu: the admin restarts the guestbook's
// Deployment after a confirmation and the cluster's pod template gets
// kubectl's restartedAt annotation; resume shows greyed (the Deployment is
// not paused); a readonly user's restart is refused and the dialog shows
// the server's reason.
func TestResourceActionRestart(t *testing.T) {
	p, dest := openDeploymentActions(t, "guestbook-actions")
	p.visible(tid("action-restart"), 15*time.Second)
	if !p.disabled(tid("action-resume")) || p.disabled(tid("action-restart")) {
		t.Error("want resume greyed and restart enabled for a running Deployment")
	}
	p.screenshot("01-actions-menu")
	p.click(tid("action-restart"))
	p.visible(tid("action-dialog"), 10*time.Second)
	p.screenshot("02-confirm-restart")
	p.click(tid("action-confirm"))
	p.until("the dialog closed after the restart", `document.querySelector('[data-testid="action-dialog"]') === null`, 15*time.Second)
	testwait.Eventually(t, "restartedAt on the Deployment's pod template", func() error {
		var d appsv1.Deployment
		if err := env.k8s.Get(context.Background(), client.ObjectKey{Namespace: dest, Name: "guestbook-ui"}, &d); err != nil {
			return err
		}
		if d.Spec.Template.Annotations[resourceactions.RestartedAtAnnotation] == "" {
			return errors.New("no restartedAt annotation")
		}
		return nil
	}, testwait.Timeout(30*time.Second), testwait.Interval(200*time.Millisecond))

	// A readonly user may open the menu; the server refuses the restart.
	addReadonlyUser(t, "ro", "ro-password-1")
	p.click(tid("panel-close"))
	p.click(tid("logout"))
	p.visible(tid("login-page"), 10*time.Second)
	p.login("ro", "ro-password-1")
	p.open("/applications/guestbook-actions")
	p.click(tid("tree-node-Deployment-guestbook-ui"))
	p.click(tid("panel-actions"))
	p.click(tid("action-restart"))
	p.click(tid("action-confirm"))
	p.visible(tid("action-dialog")+" "+tid("dialog-error"), 15*time.Second)
	if msg := p.text(tid("action-dialog") + " " + tid("dialog-error")); !strings.Contains(msg, "permission denied: applications, action/apps/Deployment/restart") {
		t.Errorf("refusal shown as %q, want the server's permission denied", msg)
	}
	p.screenshot("03-restart-refused")
}

// An action an admin defines in Lua in argocd-cm shows in the Actions menu
// beside the built-in ones (mergeBuiltinActions) and runs from it.
func TestArgoCDConfigMapLuaActionRunsFromTheMenu(t *testing.T) {
	const key = "resource.customizations.actions.apps_Deployment"
	setData(t, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: argocd, Name: "argocd-cm"}}, key, `mergeBuiltinActions: true
discovery.lua: |
  actions = {}
  actions["stamp"] = {}
  return actions
definitions:
- name: stamp
  action.lua: |
    if obj.metadata.labels == nil then
      obj.metadata.labels = {}
    end
    obj.metadata.labels["stamped"] = "from-the-ui"
    return obj
`)
	t.Cleanup(func() {
		removeData(t, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: argocd, Name: "argocd-cm"}}, key)
	})
	p, dest := openDeploymentActions(t, "guestbook-lua-action")
	p.visible(tid("action-stamp"), 15*time.Second)
	p.visible(tid("action-restart"), 5*time.Second)
	p.screenshot("04-lua-action-in-menu")
	p.click(tid("action-stamp"))
	p.visible(tid("action-dialog"), 10*time.Second)
	p.click(tid("action-confirm"))
	p.until("the dialog closed after the Lua action", `document.querySelector('[data-testid="action-dialog"]') === null`, 15*time.Second)
	testwait.Eventually(t, "the Lua action's label on the Deployment", func() error {
		var d appsv1.Deployment
		if err := env.k8s.Get(context.Background(), client.ObjectKey{Namespace: dest, Name: "guestbook-ui"}, &d); err != nil {
			return err
		}
		if d.Labels["stamped"] != "from-the-ui" {
			return fmt.Errorf("labels %v", d.Labels)
		}
		return nil
	}, testwait.Timeout(30*time.Second), testwait.Interval(200*time.Millisecond))
}

// openDeploymentActions creates the guestbook app, logs in as admin, syncs
// it from its page and opens the Actions menu of its Deployment once
// Healthy; it returns the page and the app's destination namespace.
func openDeploymentActions(t *testing.T, app string) (*page, string) {
	t.Helper()
	p := newPage(t, 1400, 900)
	newGuestbook(t, app)
	p.login("admin", env.password)
	p.visible(tid("app-tile-"+app), 30*time.Second)
	p.click(tid("app-tile-" + app))
	p.until("the Sync button (admin may sync)", attrIs(tid("app-actions"), "data-perms", "loaded"), 15*time.Second)
	p.click(tid("sync-button"))
	p.click(tid("sync-confirm"))
	p.visible(tid("tree-node-Deployment-guestbook-ui")+`[data-health="Healthy"]`, 90*time.Second)
	dest := getApp(t, app).Spec.Destination.Namespace

	p.click(tid("tree-node-Deployment-guestbook-ui"))
	p.visible(tid("resource-panel"), 10*time.Second)
	p.click(tid("panel-actions"))
	return p, dest
}
