package application

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/skiffcd/skiff/api/v1alpha1"
	"github.com/skiffcd/skiff/internal/kubeclient"
	"github.com/skiffcd/skiff/internal/testgit"
	"github.com/skiffcd/skiff/internal/testwait"
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
	c, key, dest, repo := autoSyncedApp(t, "auto", &v1alpha1.SyncPolicyAutomated{Prune: true})
	if !configMapExists(t, c, dest, "a") || !configMapExists(t, c, dest, "b") {
		t.Fatal("auto-sync did not create both ConfigMaps")
	}

	deleted := repo.Commit(map[string]string{"app/b.yaml": ""})
	waitApp(t, c, key, "the deletion synced", func(a *v1alpha1.Application) bool {
		return a.Status.Sync.Revision == deleted && a.Status.Sync.Status == v1alpha1.SyncStatusCodeSynced
	})
	testwait.Eventually(t, "the ConfigMap whose file was deleted to be pruned", func() bool { return !configMapExists(t, c, dest, "b") })

	repo.Commit(map[string]string{"app/a.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: [broken\n"})
	app := waitApp(t, c, key, "a ComparisonError", func(a *v1alpha1.Application) bool {
		return hasCondition(a, v1alpha1.ApplicationConditionComparisonError)
	})
	if !strings.Contains(conditionMessage(app, v1alpha1.ApplicationConditionComparisonError), "a.yaml") {
		t.Errorf("the error does not name the broken file: %s", conditionMessage(app, v1alpha1.ApplicationConditionComparisonError))
	}
	// The comparison that found the error decided auto-sync in the same
	// write, and asked for nothing; every later comparison of the broken
	// commit decides the same (TestDecideAutoSync: "a failed comparison
	// decides nothing").
	if last := app.Status.OperationState; app.Operation != nil || last == nil || last.Operation.Sync == nil || last.Operation.Sync.Revision != deleted {
		t.Errorf("the broken commit started a sync: operation %s, last %s", toJSON(app.Operation), toJSON(last))
	}
	if !configMapExists(t, c, dest, "a") {
		t.Error("a broken commit pruned the last good state")
	}
}

// An auto-sync with prune refuses a render that came back empty, which
// would delete everything; a SyncError condition says so, and goes once
// git has objects again. The refusal used to be silent.
func TestAutoSyncRefusingAnEmptyRenderSaysWhy(t *testing.T) {
	c, key, dest, repo := autoSyncedApp(t, "emptied", &v1alpha1.SyncPolicyAutomated{Prune: true})
	emptied := repo.Commit(map[string]string{"app/a.yaml": "", "app/b.yaml": "", "app/README.md": "moved to another repository\n"})
	app := waitApp(t, c, key, "a SyncError", func(a *v1alpha1.Application) bool {
		return hasCondition(a, v1alpha1.ApplicationConditionSyncError)
	})
	want := "Skipping sync attempt to " + emptied + ": the render returned no resources, and auto-sync refuses to prune all 2 live ones"
	if msg := conditionMessage(app, v1alpha1.ApplicationConditionSyncError); !strings.Contains(msg, want) || !strings.Contains(msg, "allowEmpty") {
		t.Errorf("SyncError %q, want it to say %q and how to allow it", msg, want)
	}
	if app.Status.Sync.Status != v1alpha1.SyncStatusCodeOutOfSync || !configMapExists(t, c, dest, "a") || !configMapExists(t, c, dest, "b") {
		t.Errorf("the empty render was synced: %s, a and b exist: %v, %v", app.Status.Sync.Status, configMapExists(t, c, dest, "a"), configMapExists(t, c, dest, "b"))
	}

	back := repo.Commit(map[string]string{"app/a.yaml": strings.ReplaceAll(configMapYAML, "%s", "a")})
	app = waitApp(t, c, key, "the next commit synced", func(a *v1alpha1.Application) bool {
		return a.Status.Sync.Revision == back && a.Status.Sync.Status == v1alpha1.SyncStatusCodeSynced
	})
	if hasCondition(app, v1alpha1.ApplicationConditionSyncError) {
		t.Errorf("the SyncError outlived its cause: %s", conditionMessage(app, v1alpha1.ApplicationConditionSyncError))
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
	// A second run would add a second history entry.
	testwait.Consistently(t, "one history entry", 2*time.Second, func() error {
		if err := c.Get(ctx, key, app); err != nil {
			return err
		}
		if len(app.Status.History) != 1 || app.Status.History[0].Revision != sha {
			return fmt.Errorf("history %+v, want exactly one entry at %s", app.Status.History, sha)
		}
		return nil
	})
	if !configMapExists(t, c, dest, "cm") {
		t.Error("the resumed sync did not apply")
	}
}

func mustScheme(t *testing.T) *runtime.Scheme {
	t.Helper()
	s, err := kubeclient.NewScheme()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestDecideAutoSync(t *testing.T) {
	now := time.Date(2026, 5, 4, 10, 0, 0, 0, time.UTC)
	finished := func(ago time.Duration) *metav1.Time { return &metav1.Time{Time: now.Add(-ago)} }
	// lastSync is an operation that ended ago at revision rev in phase.
	lastSync := func(rev string, phase v1alpha1.OperationPhase, message string, ago time.Duration, healAttempts int64) *v1alpha1.OperationState {
		return &v1alpha1.OperationState{
			Operation:  v1alpha1.Operation{Sync: &v1alpha1.SyncOperation{Revision: rev, AutoHealAttemptsCount: healAttempts}},
			Phase:      phase,
			Message:    message,
			SyncResult: &v1alpha1.SyncOperationResult{Revision: rev},
			FinishedAt: finished(ago),
		}
	}
	rendered := comparison{desired: decodeObjects(t, []string{"{apiVersion: v1, kind: ConfigMap, metadata: {name: a}}"}), revisions: []string{"new"}}
	emptyRender := comparison{desired: []*unstructured.Unstructured{}, revisions: []string{"new"}}
	tests := map[string]struct {
		policy    *v1alpha1.SyncPolicy
		sync      v1alpha1.SyncStatusCode
		last      *v1alpha1.OperationState
		operation *v1alpha1.Operation
		invalid   bool
		cmp       comparison
		// want is the operation requested (nil: none), with its retry and
		// self-heal count; the SyncError message contains wantError.
		want       *v1alpha1.Operation
		wantError  string
		wantHealIn time.Duration
	}{
		"a new revision syncs, retried five times by default as in Argo CD": {
			policy: &v1alpha1.SyncPolicy{Automated: &v1alpha1.SyncPolicyAutomated{Prune: true}}, cmp: rendered,
			last: lastSync("old", v1alpha1.OperationSucceeded, "", time.Hour, 0),
			want: &v1alpha1.Operation{Sync: &v1alpha1.SyncOperation{Revision: "new", Prune: true}, Retry: v1alpha1.RetryStrategy{Limit: 5}},
		},
		"syncPolicy.retry replaces the default retry": {
			policy: &v1alpha1.SyncPolicy{Automated: &v1alpha1.SyncPolicyAutomated{}, Retry: &v1alpha1.RetryStrategy{Limit: -1}}, cmp: rendered,
			want: &v1alpha1.Operation{Sync: &v1alpha1.SyncOperation{Revision: "new"}, Retry: v1alpha1.RetryStrategy{Limit: -1}},
		},
		"an app without automated sync does not sync by itself": {
			policy: &v1alpha1.SyncPolicy{}, cmp: rendered,
		},
		"automated sync turned off by enabled: false does not sync": {
			policy: &v1alpha1.SyncPolicy{Automated: &v1alpha1.SyncPolicyAutomated{Enabled: new(bool)}}, cmp: rendered,
		},
		"a synced app does not sync": {
			policy: &v1alpha1.SyncPolicy{Automated: &v1alpha1.SyncPolicyAutomated{}}, sync: v1alpha1.SyncStatusCodeSynced, cmp: rendered,
		},
		"a failed comparison decides nothing": {
			policy: &v1alpha1.SyncPolicy{Automated: &v1alpha1.SyncPolicyAutomated{}}, cmp: comparison{failed: true},
		},
		"an operation in flight decides nothing": {
			policy: &v1alpha1.SyncPolicy{Automated: &v1alpha1.SyncPolicyAutomated{}}, cmp: rendered,
			operation: &v1alpha1.Operation{Sync: &v1alpha1.SyncOperation{}},
		},
		"an invalid spec blocks auto-sync": {
			policy: &v1alpha1.SyncPolicy{Automated: &v1alpha1.SyncPolicyAutomated{}}, cmp: rendered, invalid: true,
		},
		"an empty render with prune is refused, and a SyncError says why": {
			policy: &v1alpha1.SyncPolicy{Automated: &v1alpha1.SyncPolicyAutomated{Prune: true}}, cmp: emptyRender,
			wantError: "Skipping sync attempt to new: the render returned no resources, and auto-sync refuses to prune all 2 live ones",
		},
		"an empty render with allowEmpty syncs": {
			policy: &v1alpha1.SyncPolicy{Automated: &v1alpha1.SyncPolicyAutomated{Prune: true, AllowEmpty: true}}, cmp: emptyRender,
			want: &v1alpha1.Operation{Sync: &v1alpha1.SyncOperation{Revision: "new", Prune: true}, Retry: v1alpha1.RetryStrategy{Limit: 5}},
		},
		"an empty render without prune is not synced; it would change nothing": {
			policy: &v1alpha1.SyncPolicy{Automated: &v1alpha1.SyncPolicyAutomated{}}, cmp: emptyRender,
		},
		"a revision whose sync failed is left for a new commit or a manual sync, with a SyncError": {
			policy: &v1alpha1.SyncPolicy{Automated: &v1alpha1.SyncPolicyAutomated{SelfHeal: true}}, cmp: rendered,
			last:      lastSync("new", v1alpha1.OperationFailed, "one or more objects failed to apply", time.Hour, 0),
			wantError: "Failed last sync attempt to new: one or more objects failed to apply",
		},
		"drift without selfHeal waits for a new commit": {
			policy: &v1alpha1.SyncPolicy{Automated: &v1alpha1.SyncPolicyAutomated{}}, cmp: rendered,
			last: lastSync("new", v1alpha1.OperationSucceeded, "", time.Hour, 0),
		},
		"drift with selfHeal waits for the back-off of its attempts": {
			policy: &v1alpha1.SyncPolicy{Automated: &v1alpha1.SyncPolicyAutomated{SelfHeal: true}}, cmp: rendered,
			last:       lastSync("new", v1alpha1.OperationSucceeded, "", 12*time.Second, 2),
			wantHealIn: 8 * time.Second, // 5 s doubled twice
		},
		"drift with selfHeal heals once its back-off is over, counting the attempt": {
			policy: &v1alpha1.SyncPolicy{Automated: &v1alpha1.SyncPolicyAutomated{SelfHeal: true}}, cmp: rendered,
			last: lastSync("new", v1alpha1.OperationSucceeded, "", 21*time.Second, 2),
			want: &v1alpha1.Operation{Sync: &v1alpha1.SyncOperation{Revision: "new", AutoHealAttemptsCount: 3}, Retry: v1alpha1.RetryStrategy{Limit: 5}},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			app := &v1alpha1.Application{Operation: tc.operation}
			app.Spec.SyncPolicy = tc.policy
			app.Status.Sync.Status = cmp.Or(tc.sync, v1alpha1.SyncStatusCodeOutOfSync)
			app.Status.OperationState = tc.last
			app.Status.Resources = []v1alpha1.ResourceStatus{{Name: "a", RequiresPruning: true}, {Name: "b", RequiresPruning: true}}
			if tc.invalid {
				app.Status.Conditions = []v1alpha1.ApplicationCondition{{Type: v1alpha1.ApplicationConditionInvalidSpecError, Message: "bad"}}
			}
			got := decideAutoSync(app, tc.cmp, now)
			if tc.want != nil {
				tc.want.InitiatedBy = v1alpha1.OperationInitiator{Automated: true}
			}
			if !equalJSON(got.operation, tc.want) {
				t.Errorf("operation %s, want %s", toJSON(got.operation), toJSON(tc.want))
			}
			if tc.wantError == "" && got.syncError != "" || !strings.Contains(got.syncError, tc.wantError) {
				t.Errorf("SyncError %q, want %q", got.syncError, tc.wantError)
			}
			if got.healIn != tc.wantHealIn {
				t.Errorf("self-heal in %s, want %s", got.healIn, tc.wantHealIn)
			}
		})
	}
}

func toJSON(v any) string {
	data, _ := json.Marshal(v)
	return string(data)
}
