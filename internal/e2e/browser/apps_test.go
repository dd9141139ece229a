package browser

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/skiffcd/skiff/api/v1alpha1"
	"github.com/skiffcd/skiff/internal/testcluster"
	"github.com/skiffcd/skiff/internal/testgit"
	"github.com/skiffcd/skiff/internal/testwait"
)

// newGuestbook commits Argo CD's guestbook to a new repository and creates
// an Application for it with a manual sync policy, deploying to a namespace
// of the test's own. It returns the first commit and the repository.
func newGuestbook(t *testing.T, name string) (string, *testgit.Repo) {
	t.Helper()
	repo := testgit.New(t)
	first := repo.Commit(testgit.Dir(t, "testdata/guestbook", "guestbook"))
	dest := env.cluster.Namespace(t)
	app := &v1alpha1.Application{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: argocd},
		Spec: v1alpha1.ApplicationSpec{
			Project:     "default",
			Source:      &v1alpha1.ApplicationSource{RepoURL: repo.URL(), Path: "guestbook", TargetRevision: "HEAD"},
			Destination: v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: dest},
			// Automated sync turned off by enabled: false is no automated
			// sync: the pages offer manual syncs and rollbacks.
			SyncPolicy: &v1alpha1.SyncPolicy{Automated: &v1alpha1.SyncPolicyAutomated{Enabled: ptr.To(false)}},
		},
	}
	ctx := context.Background()
	if err := env.k8s.Create(ctx, app); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = env.k8s.Delete(context.Background(), app)
	})
	return first, repo
}

// The getting-started flow through the UI: log in, open the guestbook,
// sync it and see it become Synced and Healthy live, sync a second commit,
// and roll back to the first from History.
func TestApplicationLifecycle(t *testing.T) {
	p := newPage(t, 1400, 900)
	first, repo := newGuestbook(t, "guestbook")

	// Every API call needs a session, so the UI starts at the login form.
	p.open("/applications")
	p.visible(tid("login-page"), 30*time.Second)
	p.typeInto("#login-username", "admin")
	p.typeInto("#login-password", "wrong")
	p.click("#login-submit")
	p.visible(tid("login-error"), 10*time.Second)
	if msg := p.text(tid("login-error")); !strings.Contains(msg, "Invalid") {
		t.Errorf("login error %q, want the server's message", msg)
	}
	p.screenshot("01-login-error")
	p.clearInput("#login-password")
	p.typeInto("#login-password", env.password)
	p.click("#login-submit")

	p.visible(tid("app-tile-guestbook"), 30*time.Second)
	// The controller compares soon after creation: OutOfSync, nothing deployed.
	p.until("guestbook OutOfSync in the list", attrIs(tid("app-tile-guestbook")+" "+tid("app-sync"), "data-status", "OutOfSync"), 60*time.Second)
	p.markNoReload()
	p.screenshot("02-applications")

	// Search, filters and the list view narrow and reshape the same apps.
	p.typeInto(tid("app-search"), "no-such-app")
	p.visible(tid("apps-none-match"), 5*time.Second)
	p.clearInput(tid("app-search"))
	p.typeInto(tid("app-search"), "guest")
	p.visible(tid("app-tile-guestbook"), 5*time.Second)
	p.click(tid("filter-sync-Synced"))
	p.visible(tid("apps-none-match"), 5*time.Second)
	p.click(tid("filter-sync-Synced"))
	p.click(tid("filter-sync-OutOfSync"))
	p.visible(tid("app-tile-guestbook"), 5*time.Second)
	p.click(tid("view-list"))
	p.visible(tid("app-row-guestbook"), 5*time.Second)
	p.screenshot("02b-list-view")
	p.click(tid("filter-clear"))
	p.click(tid("view-tiles"))

	p.click(tid("app-tile-guestbook"))
	p.visible(tid("app-name"), 10*time.Second)
	p.visible(tid("tree-node-Deployment-guestbook-ui"), 30*time.Second)
	p.visible(tid("tree-node-Service-guestbook-ui"), 10*time.Second)
	// The page follows the app's event stream rather than polling.
	p.until("the app stream open", attrIs(tid("live-indicator"), "data-state", "live"), 15*time.Second)
	p.screenshot("03-app-before-sync")

	p.until("the Sync button (admin may sync)", attrIs(tid("app-actions"), "data-perms", "loaded"), 10*time.Second)
	p.click(tid("sync-button"))
	p.visible(tid("sync-dialog"), 10*time.Second)
	if !p.exists(tid("sync-resource-Deployment-guestbook-ui")) {
		t.Error("the sync dialog lists no Deployment to select")
	}
	p.screenshot("04-sync-dialog")
	p.click(tid("sync-confirm"))
	p.waitSyncedHealthy(first)
	// The tree follows: the Deployment's ReplicaSet and Pod show up.
	p.visible(tid("tree-node-Deployment-guestbook-ui")+`[data-health="Healthy"]`, 30*time.Second)
	p.until("a Pod in the tree", `document.querySelector('[data-testid^="tree-node-Pod-guestbook-ui-"]') !== null`, 45*time.Second)
	p.checkNoReload()
	p.screenshot("05-synced-healthy")

	// The resource panel: live manifest of the Deployment.
	p.click(tid("tree-node-Deployment-guestbook-ui"))
	p.visible(tid("resource-panel"), 10*time.Second)
	p.until("the live manifest", `document.querySelector('[data-testid="live-manifest"]')?.textContent.includes("kind: Deployment")`, 15*time.Second)
	p.screenshot("06-live-manifest")
	p.click(tid("panel-tab-events"))
	p.until("the Deployment's events", `document.querySelector('[data-testid="resource-events"]')?.textContent.includes("ScalingReplicaSet")`, 15*time.Second)
	p.screenshot("06-resource-events")
	p.click(tid("panel-close"))

	// A second revision: 2 replicas.
	second := repo.Commit(map[string]string{"guestbook/guestbook-ui-deployment.yaml": strings.Replace(readFile(t, "testdata/guestbook/guestbook-ui-deployment.yaml"), "replicas: 1", "replicas: 2", 1)})
	p.click(tid("refresh-button"))
	p.until("OutOfSync after the new commit", attrIs(tid("app-sync-status"), "data-status", "OutOfSync"), 60*time.Second)
	p.click(tid("tab-diff"))
	p.until("the Deployment's diff", `document.querySelector('[data-testid="diff-Deployment-guestbook-ui"], [data-testid="diff-error"]') !== null`, 15*time.Second)
	p.screenshot("07-diff")
	p.click(tid("tab-tree"))
	p.click(tid("sync-button"))
	p.click(tid("sync-confirm"))
	p.waitSyncedHealthy(second)
	p.screenshot("08-second-revision")
	p.click(tid("tab-events"))
	p.until("the app's own events", `document.querySelector('[data-testid="app-events"]')?.textContent.includes("OperationStarted")`, 15*time.Second)
	p.screenshot("08b-app-events")

	// Roll back to the first entry of the history.
	p.click(tid("history-button"))
	p.visible(tid("history-list"), 10*time.Second)
	p.screenshot("09-history")
	var firstID int64 = -1
	app := getApp(t, "guestbook")
	for _, h := range app.Status.History {
		if h.Revision == first {
			firstID = h.ID
			break
		}
	}
	if firstID < 0 {
		t.Fatalf("no history entry for %s in %+v", first, app.Status.History)
	}
	p.click(tid(fmt.Sprintf("rollback-%d", firstID)))
	p.visible(tid("rollback-dialog"), 10*time.Second)
	p.click(tid("rollback-dialog") + " " + tid("dialog-confirm"))
	p.until("the rollback to succeed on the first revision",
		attrIs(tid("operation-phase"), "data-status", "Succeeded")+" && "+attrIs(tid("operation-revision"), "title", first), 90*time.Second)
	p.until("the newest history entry on the first revision", fmt.Sprintf(`document.querySelector('[data-testid="history-list"] .history-entry')?.dataset.revision === %s`, jsString(first)), 30*time.Second)
	p.checkNoReload()
	p.screenshot("10-rolled-back")
	waitReplicas(t, app.Spec.Destination.Namespace, "guestbook-ui", 1)

	// The same pages on a phone.
	p.viewport(390, 844)
	p.click(tid("tab-tree"))
	p.screenshot("11-phone-app")
	p.open("/applications")
	p.visible(tid("app-tile-guestbook"), 30*time.Second)
	p.screenshot("12-phone-applications")

	// Delete, confirmed by typing the name; the tile goes away live.
	p.click(tid("app-tile-guestbook"))
	p.click(tid("delete-button"))
	p.visible(tid("delete-dialog"), 10*time.Second)
	if !p.disabled(tid("delete-confirm")) {
		t.Error("Delete is enabled before the name is typed")
	}
	p.typeInto(tid("delete-confirm-name"), "guestbook")
	p.screenshot("13-phone-delete")
	p.click(tid("delete-confirm"))
	p.until("back on the list without the app", `location.pathname === "/applications" && document.querySelector('[data-testid="apps-empty"], [data-testid="app-tiles"]') !== null && document.querySelector('[data-testid="app-tile-guestbook"]') === null`, 60*time.Second)
	waitGone(t, app.Spec.Destination.Namespace, "guestbook-ui")
}

// waitGone waits until the cascade removed the Deployment.
func waitGone(t *testing.T, ns, name string) {
	t.Helper()
	gone := testcluster.Gone(env.k8s, &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}})
	testwait.Eventually(t, "the cascading delete to remove the Deployment", gone,
		testwait.Timeout(60*time.Second), testwait.Interval(200*time.Millisecond))
}

// waitSyncedHealthy waits, without reloading, for the page to show the app
// Synced to revision and Healthy, with the operation Succeeded.
func (p *page) waitSyncedHealthy(revision string) {
	p.t.Helper()
	p.until("Synced, Healthy and Succeeded at "+revision[:7],
		attrIs(tid("app-sync-status"), "data-status", "Synced")+" && "+
			attrIs(tid("app-health"), "data-status", "Healthy")+" && "+
			attrIs(tid("operation-phase"), "data-status", "Succeeded")+" && "+
			attrIs(tid("app-revision"), "title", revision), 120*time.Second)
}

func getApp(t *testing.T, name string) *v1alpha1.Application {
	t.Helper()
	app := &v1alpha1.Application{}
	if err := env.k8s.Get(context.Background(), client.ObjectKey{Namespace: argocd, Name: name}, app); err != nil {
		t.Fatal(err)
	}
	return app
}

// waitReplicas waits until the Deployment in the cluster asks for replicas.
func waitReplicas(t *testing.T, ns, name string, replicas int32) {
	t.Helper()
	testwait.Eventually(t, fmt.Sprintf("deployment %s/%s to ask for %d replicas", ns, name, replicas), func() error {
		var dep appsv1.Deployment
		if err := env.k8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, &dep); err != nil {
			return err
		}
		if dep.Spec.Replicas == nil || *dep.Spec.Replicas != replicas {
			return fmt.Errorf("replicas %v", ptr.Deref(dep.Spec.Replicas, -1))
		}
		return nil
	}, testwait.Interval(200*time.Millisecond))
}

// An app created from the New app form is compared with git at once.
func TestCreateApplication(t *testing.T) {
	p := newPage(t, 1280, 900)
	repo := testgit.New(t)
	repo.Commit(testgit.Dir(t, "testdata/guestbook", "guestbook"))
	dest := env.cluster.Namespace(t)
	t.Cleanup(func() {
		_ = env.k8s.Delete(context.Background(), &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Namespace: argocd, Name: "created"}})
	})

	p.login("admin", env.password)
	p.until("the New app button (admin may create)", attrIs(tid("new-app-button"), "data-perms", "loaded"), 15*time.Second)
	p.click(tid("new-app-button"))
	p.visible(tid("new-app-dialog"), 10*time.Second)
	p.typeInto(tid("new-app-name"), "created")
	p.typeInto(tid("new-app-repo"), repo.URL())
	p.typeInto(tid("new-app-path"), "guestbook")
	p.typeInto(tid("new-app-namespace"), dest)
	p.screenshot("01-form")
	p.click(tid("new-app-create"))
	p.until("the new app's page, OutOfSync and Missing", `location.pathname === "/applications/created" && `+
		attrIs(tid("app-sync-status"), "data-status", "OutOfSync")+" && "+attrIs(tid("app-health"), "data-status", "Missing"), 60*time.Second)
	p.visible(tid("tree-node-Deployment-guestbook-ui"), 30*time.Second)
	p.screenshot("02-created")
	app := getApp(t, "created")
	if app.Spec.Source == nil || app.Spec.Source.RepoURL != repo.URL() || app.Spec.Destination.Namespace != dest || app.Spec.SyncPolicy != nil {
		t.Errorf("created app spec: %+v", app.Spec)
	}
}
