package application

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/skiffcd/skiff/api/v1alpha1"
	"github.com/skiffcd/skiff/internal/testgit"
)

const configMapYAML = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: %s}\ndata: {k: v}\n"

func newApp(ns, name, repoURL, path, dest string, policy *v1alpha1.SyncPolicy) *v1alpha1.Application {
	return &v1alpha1.Application{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: v1alpha1.ApplicationSpec{
			Project:     "default",
			Source:      &v1alpha1.ApplicationSource{RepoURL: repoURL, Path: path, TargetRevision: "HEAD"},
			Destination: v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: dest},
			SyncPolicy:  policy,
		},
	}
}

func configMapExists(t *testing.T, c client.Client, ns, name string) bool {
	t.Helper()
	cm := &corev1.ConfigMap{}
	err := c.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, cm)
	if apierrors.IsNotFound(err) {
		return false
	}
	if err != nil {
		t.Fatal(err)
	}
	return cm.DeletionTimestamp == nil
}

// Auto-sync with prune follows git, including deletions; a commit that
// breaks rendering leaves the app on its last good state with a
// ComparisonError, and nothing is pruned.
func TestAutoSyncPrunesDeletedFilesAndSurvivesBrokenCommits(t *testing.T) {
	ctx := context.Background()
	c, key, dest, repo := autoSyncedApp(t, "auto", &v1alpha1.SyncPolicyAutomated{Prune: true})
	if !configMapExists(t, c, dest, "a") || !configMapExists(t, c, dest, "b") {
		t.Fatal("auto-sync did not create both ConfigMaps")
	}

	deleted := repo.Commit(map[string]string{"app/b.yaml": ""})
	waitApp(t, c, key, "the deletion synced", func(a *v1alpha1.Application) bool {
		return a.Status.Sync.Revision == deleted && a.Status.Sync.Status == v1alpha1.SyncStatusCodeSynced
	})
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		return !configMapExists(t, c, dest, "b"), nil
	})
	if err != nil {
		t.Fatal("the ConfigMap whose file was deleted was not pruned")
	}

	repo.Commit(map[string]string{"app/a.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: [broken\n"})
	app := waitApp(t, c, key, "a ComparisonError", func(a *v1alpha1.Application) bool {
		return hasCondition(a, v1alpha1.ApplicationConditionComparisonError)
	})
	if !strings.Contains(conditionMessage(app, v1alpha1.ApplicationConditionComparisonError), "a.yaml") {
		t.Errorf("the error does not name the broken file: %s", conditionMessage(app, v1alpha1.ApplicationConditionComparisonError))
	}
	// Give the controller a few polls to do something wrong.
	time.Sleep(4 * time.Second)
	if !configMapExists(t, c, dest, "a") {
		t.Error("a broken commit pruned the last good state")
	}
}

// autoSyncedApp starts a controller and an automated app of two ConfigMaps,
// a and b, in a new repository, and waits until it is Synced and Healthy.
func autoSyncedApp(t *testing.T, name string, auto *v1alpha1.SyncPolicyAutomated) (c client.Client, key client.ObjectKey, dest string, repo *testgit.Repo) {
	t.Helper()
	argocd := cluster.Namespace(t)
	dest = cluster.Namespace(t)
	c = startController(t, argocd)
	repo = testgit.New(t)
	repo.Commit(map[string]string{
		"app/a.yaml": strings.ReplaceAll(configMapYAML, "%s", "a"),
		"app/b.yaml": strings.ReplaceAll(configMapYAML, "%s", "b"),
	})
	app := newApp(argocd, name, repo.URL(), "app", dest, &v1alpha1.SyncPolicy{Automated: auto})
	if err := c.Create(context.Background(), app); err != nil {
		t.Fatal(err)
	}
	key = client.ObjectKeyFromObject(app)
	waitApp(t, c, key, "auto-synced", statusIs(v1alpha1.SyncStatusCodeSynced, v1alpha1.HealthStatusHealthy))
	return c, key, dest, repo
}

func conditionMessage(app *v1alpha1.Application, t v1alpha1.ApplicationConditionType) string {
	for _, c := range app.Status.Conditions {
		if c.Type == t {
			return c.Message
		}
	}
	return ""
}

// A project that does not allow the destination namespace, or a
// cluster-scoped kind, blocks the sync with a condition and applies nothing.
func TestProjectRulesBlockSyncs(t *testing.T) {
	ctx := context.Background()
	argocd, dest := cluster.Namespace(t), cluster.Namespace(t)
	c := startController(t, argocd)
	repo := testgit.New(t)
	repo.Commit(map[string]string{
		"ns/cm.yaml":      strings.ReplaceAll(configMapYAML, "%s", "cm"),
		"cluster/ns.yaml": "apiVersion: v1\nkind: Namespace\nmetadata: {name: " + dest + "-extra}\n",
	})
	proj := &v1alpha1.AppProject{
		ObjectMeta: metav1.ObjectMeta{Name: "team", Namespace: argocd},
		Spec: v1alpha1.AppProjectSpec{
			SourceRepos:  []string{"*"},
			Destinations: []v1alpha1.ApplicationDestination{{Server: "https://kubernetes.default.svc", Namespace: "team-*"}},
		},
	}
	if err := c.Create(ctx, proj); err != nil {
		t.Fatal(err)
	}
	tests := map[string]struct {
		path, dest, want string
	}{
		"a namespace outside the project's destinations":       {path: "ns", dest: dest, want: "do not match any of the allowed destinations"},
		"a cluster-scoped kind the project does not whitelist": {path: "cluster", dest: "team-a", want: "is not permitted in project"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			app := newApp(argocd, strings.ReplaceAll(tc.path, "/", "-"), repo.URL(), tc.path, tc.dest, nil)
			app.Spec.Project = "team"
			if err := c.Create(ctx, app); err != nil {
				t.Fatal(err)
			}
			key := client.ObjectKeyFromObject(app)
			app = waitApp(t, c, key, "an InvalidSpecError", func(a *v1alpha1.Application) bool {
				return strings.Contains(conditionMessage(a, v1alpha1.ApplicationConditionInvalidSpecError), tc.want)
			})
			requestSync(t, c, app, v1alpha1.SyncOperation{})
			app = waitApp(t, c, key, "the sync to fail", func(a *v1alpha1.Application) bool {
				return a.Operation == nil && a.Status.OperationState != nil && a.Status.OperationState.Phase == v1alpha1.OperationError
			})
			if !strings.Contains(app.Status.OperationState.Message, tc.want) {
				t.Errorf("operation message %q does not explain the violation", app.Status.OperationState.Message)
			}
			if configMapExists(t, c, dest, "cm") {
				t.Error("an object was applied despite the violation")
			}
			ns := &corev1.Namespace{}
			if err := c.Get(ctx, client.ObjectKey{Name: dest + "-extra"}, ns); err == nil {
				t.Error("the forbidden Namespace was created")
			}
		})
	}
}

// A controller that died during a sync leaves the operation Running; the
// next controller runs it once and records one history entry.
func TestInterruptedOperationFinishesOnceAfterRestart(t *testing.T) {
	ctx := context.Background()
	argocd, dest := cluster.Namespace(t), cluster.Namespace(t)
	repo := testgit.New(t)
	sha := repo.Commit(map[string]string{"app/cm.yaml": strings.ReplaceAll(configMapYAML, "%s", "cm")})
	direct, err := client.New(cluster.Config, client.Options{Scheme: mustScheme(t)})
	if err != nil {
		t.Fatal(err)
	}
	app := newApp(argocd, "resumed", repo.URL(), "app", dest, nil)
	app.Operation = &v1alpha1.Operation{Sync: &v1alpha1.SyncOperation{Revision: sha}}
	if err := direct.Create(ctx, app); err != nil {
		t.Fatal(err)
	}
	// What the dead controller had written: the operation started, no result.
	app.Status.OperationState = &v1alpha1.OperationState{
		Operation: *app.Operation, Phase: v1alpha1.OperationRunning, Message: "Syncing",
		StartedAt: metav1.NewTime(time.Now().Add(-time.Minute)),
	}
	if err := direct.Update(ctx, app); err != nil {
		t.Fatal(err)
	}

	c := startController(t, argocd)
	key := client.ObjectKeyFromObject(app)
	app = waitApp(t, c, key, "the resumed operation to finish", func(a *v1alpha1.Application) bool {
		return a.Operation == nil && a.Status.OperationState != nil && a.Status.OperationState.Phase == v1alpha1.OperationSucceeded
	})
	time.Sleep(2 * time.Second) // a second run would add a second history entry
	if err := c.Get(ctx, key, app); err != nil {
		t.Fatal(err)
	}
	if len(app.Status.History) != 1 || app.Status.History[0].Revision != sha {
		t.Errorf("history %+v, want exactly one entry at %s", app.Status.History, sha)
	}
	if !configMapExists(t, c, dest, "cm") {
		t.Error("the resumed sync did not apply")
	}
}

func mustScheme(t *testing.T) *runtime.Scheme {
	t.Helper()
	s, err := newScheme()
	if err != nil {
		t.Fatal(err)
	}
	return s
}
