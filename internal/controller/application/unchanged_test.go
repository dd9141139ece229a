package application

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/skiffcd/skiff/api/v1alpha1"
	"github.com/skiffcd/skiff/internal/testgit"
	"github.com/skiffcd/skiff/internal/testwait"
)

func TestReusable(t *testing.T) {
	inputs := &comparisonInputs{render: "key"}
	auto := &v1alpha1.SyncPolicy{Automated: &v1alpha1.SyncPolicyAutomated{SelfHeal: true}}
	off := false
	disabled := &v1alpha1.SyncPolicy{Automated: &v1alpha1.SyncPolicyAutomated{Enabled: &off}}
	tests := map[string]struct {
		policy    *v1alpha1.SyncPolicy
		sync      v1alpha1.SyncStatusCode
		operation bool
		failed    bool
		want      bool
	}{
		"a synced auto-synced app is reusable":         {policy: auto, sync: v1alpha1.SyncStatusCodeSynced, want: true},
		"an out-of-sync manual app is reusable":        {sync: v1alpha1.SyncStatusCodeOutOfSync, want: true},
		"an out-of-sync app with auto-sync off is too": {policy: disabled, sync: v1alpha1.SyncStatusCodeOutOfSync, want: true},
		"an out-of-sync auto-synced app is not: self-heal waits for a time": {
			policy: auto, sync: v1alpha1.SyncStatusCodeOutOfSync},
		"an app with an operation is not": {sync: v1alpha1.SyncStatusCodeSynced, operation: true},
		"a failed comparison is not":      {sync: v1alpha1.SyncStatusCodeUnknown, failed: true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			app := &v1alpha1.Application{}
			app.Spec.SyncPolicy = tc.policy
			app.Status.Sync.Status = tc.sync
			if tc.operation {
				app.Operation = &v1alpha1.Operation{Sync: &v1alpha1.SyncOperation{}}
			}
			cmp := comparison{inputs: inputs, failed: tc.failed}
			if tc.failed {
				cmp.inputs = nil
			}
			if got := reusable(app, cmp); got != tc.want {
				t.Errorf("reusable = %v, want %v", got, tc.want)
			}
		})
	}
}

// reusedComparisons reads skiff_app_comparisons_total{outcome="reused"} of
// namespace ns.
func reusedComparisons(t *testing.T, ns string) float64 {
	t.Helper()
	return comparisonsCounted(t, ns, comparisonReused)
}

// comparisonsCounted reads skiff_app_comparisons_total{outcome} of
// namespace ns.
func comparisonsCounted(t *testing.T, ns, outcome string) float64 {
	t.Helper()
	var m dto.Metric
	if err := comparisonsTotal.WithLabelValues(ns, outcome).Write(&m); err != nil {
		t.Fatal(err)
	}
	return m.GetCounter().GetValue()
}

// waitReused waits until namespace ns has had n more reused comparisons
// than from.
func waitReused(t *testing.T, ns string, from float64, n int, what string) {
	t.Helper()
	testwait.Eventually(t, what, func() error {
		if got, want := reusedComparisons(t, ns), from+float64(n); got < want {
			return fmt.Errorf("%v reused comparisons, want %v", got, want)
		}
		return nil
	}, testwait.Interval(50*time.Millisecond))
}

// compareUntilReused asks for comparisons of app until one is reused (the
// first after a change may be computed).
func compareUntilReused(t *testing.T, r *Reconciler, ns, app, what string) {
	t.Helper()
	from := reusedComparisons(t, ns)
	// Each check asks for one comparison: the interval paces them.
	testwait.Eventually(t, "a reused comparison "+what, func() bool {
		r.enqueueCompare(app)
		return reusedComparisons(t, ns) > from
	}, testwait.Interval(200*time.Millisecond))
}

// createConfigMapApp commits the ConfigMap "a" to a new repository and
// creates the Application name in namespace argocd, auto-synced with prune
// (no self-heal) into a namespace of its own, dest.
func createConfigMapApp(t *testing.T, c client.Client, argocd, name string) (repo *testgit.Repo, key client.ObjectKey, dest string) {
	t.Helper()
	dest = cluster.Namespace(t)
	repo = testgit.New(t)
	repo.Commit(map[string]string{"app/a.yaml": strings.ReplaceAll(configMapYAML, "%s", "a")})
	app := newApp(argocd, name, repo.URL(), "app", dest, &v1alpha1.SyncPolicy{Automated: &v1alpha1.SyncPolicyAutomated{Prune: true}})
	if err := c.Create(context.Background(), app); err != nil {
		t.Fatal(err)
	}
	return repo, client.ObjectKeyFromObject(app), dest
}

// commitConfigMapChange commits a new value of the ConfigMap of
// createConfigMapApp and returns the commit.
func commitConfigMapChange(repo *testgit.Repo) string {
	return repo.Commit(map[string]string{"app/a.yaml": strings.ReplaceAll(strings.ReplaceAll(configMapYAML, "%s", "a"), "k: v", "k: committed")})
}

// Polls of an app where nothing changed reuse its last comparison, still
// record when they compared (that write moves the timestamps alone, and
// the polls after it still reuse), and still find a new commit.
func TestPollsOfAnUnchangedAppReuseItsComparison(t *testing.T) {
	argocd := cluster.Namespace(t)
	c, _ := startReconciler(t, argocd, 2*time.Second)
	repo, key, _ := createConfigMapApp(t, c, argocd, "polled")
	synced := waitApp(t, c, key, "auto-synced", statusIs(v1alpha1.SyncStatusCodeSynced, v1alpha1.HealthStatusHealthy))
	waitReused(t, argocd, reusedComparisons(t, argocd), 2, "polls after the sync")
	stamped := waitApp(t, c, key, "reconciledAt written by a poll", func(a *v1alpha1.Application) bool {
		return a.Status.ReconciledAt != nil && a.Status.ReconciledAt.After(synced.Status.ReconciledAt.Time)
	})
	if !stamped.Status.ObservedAt.Equal(stamped.Status.ReconciledAt) {
		t.Errorf("observedAt %v, want reconciledAt %v", stamped.Status.ObservedAt, stamped.Status.ReconciledAt)
	}
	untimed := stamped.Status.DeepCopy()
	untimed.ReconciledAt, untimed.ObservedAt = synced.Status.ReconciledAt, synced.Status.ObservedAt
	if !equalJSON(synced.Status, *untimed) {
		t.Errorf("the poll's write changed more than the timestamps:\nbefore %+v\nafter  %+v", synced.Status, stamped.Status)
	}
	computed := comparisonsCounted(t, argocd, comparisonComputed)
	waitReused(t, argocd, reusedComparisons(t, argocd), 2, "polls after the timestamps' write")
	if now := comparisonsCounted(t, argocd, comparisonComputed); now != computed {
		t.Errorf("%v comparisons computed after the timestamps' write, want none", now-computed)
	}

	sha := commitConfigMapChange(repo)
	waitApp(t, c, key, "the commit found by a poll and synced", func(a *v1alpha1.Application) bool {
		return a.Status.Sync.Revision == sha && a.Status.Sync.Status == v1alpha1.SyncStatusCodeSynced
	})
}

// Each thing a comparison reads shows at the next comparison once it
// changes, though the one before it was reused: a commit, the project, a
// live object. Comparisons are asked one at a time (polls are an hour
// apart), so none can be computed by chance.
func TestAReusedComparisonSeesEachInputChange(t *testing.T) {
	ctx := context.Background()
	argocd := cluster.Namespace(t)
	c, r := startReconciler(t, argocd, time.Hour)
	// Auto-sync without self-heal: drift stays visible as OutOfSync.
	repo, key, dest := createConfigMapApp(t, c, argocd, "steady")
	waitApp(t, c, key, "auto-synced", statusIs(v1alpha1.SyncStatusCodeSynced, v1alpha1.HealthStatusHealthy))
	// What changes next changes under a remembered comparison.
	compareReused := func(what string) { compareUntilReused(t, r, argocd, key.Name, what) }
	compareReused("after the sync")

	sha := commitConfigMapChange(repo)
	r.Repo.Forget(repo.URL()) // the next resolution asks git, without a revision move to spread
	r.enqueueCompare(key.Name)
	waitApp(t, c, key, "the commit found and synced", func(a *v1alpha1.Application) bool {
		return a.Status.Sync.Revision == sha && a.Status.Sync.Status == v1alpha1.SyncStatusCodeSynced
	})
	compareReused("after the commit")

	proj := &v1alpha1.AppProject{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: argocd, Name: "default"}, proj); err != nil {
		t.Fatal(err)
	}
	patch := client.MergeFrom(proj.DeepCopy())
	proj.Spec.SourceRepos = []string{"https://example.invalid/*"}
	if err := c.Patch(ctx, proj, patch); err != nil {
		t.Fatal(err)
	}
	// The cached project must show the change before the comparison.
	testwait.Eventually(t, "the project's change to reach the cache", func() error {
		cached := &v1alpha1.AppProject{}
		if err := r.Client.Get(ctx, client.ObjectKeyFromObject(proj), cached); err != nil {
			return err
		}
		if cached.ResourceVersion != proj.ResourceVersion {
			return fmt.Errorf("resourceVersion %s, want %s", cached.ResourceVersion, proj.ResourceVersion)
		}
		return nil
	}, testwait.Timeout(10*time.Second), testwait.Interval(50*time.Millisecond))
	r.enqueueCompare(key.Name)
	waitApp(t, c, key, "the project's new rule applied", func(a *v1alpha1.Application) bool {
		return conditionMessage(a, v1alpha1.ApplicationConditionInvalidSpecError) != ""
	})
	patch = client.MergeFrom(proj.DeepCopy())
	proj.Spec.SourceRepos = []string{"*"}
	if err := c.Patch(ctx, proj, patch); err != nil {
		t.Fatal(err)
	}
	waitApp(t, c, key, "the project's rule lifted", func(a *v1alpha1.Application) bool {
		r.enqueueCompare(key.Name)
		return conditionMessage(a, v1alpha1.ApplicationConditionInvalidSpecError) == "" &&
			a.Status.Sync.Status == v1alpha1.SyncStatusCodeSynced
	})
	compareReused("after the project's change")

	cm := &corev1.ConfigMap{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: dest, Name: "a"}, cm); err != nil {
		t.Fatal(err)
	}
	cmPatch := client.MergeFrom(cm.DeepCopy())
	cm.Data["k"] = "drifted"
	if err := c.Patch(ctx, cm, cmPatch); err != nil {
		t.Fatal(err)
	}
	waitApp(t, c, key, "the live change seen", statusIs(v1alpha1.SyncStatusCodeOutOfSync, v1alpha1.HealthStatusHealthy))
}

// The comparison an operation's result carries stands for the next ones:
// after a commit is found and synced, the comparisons that follow (the
// watch event of the object the sync updated, polls) are reused until
// something moves. Only the comparison that found the commit is computed.
func TestTheComparisonASyncWroteIsReused(t *testing.T) {
	argocd := cluster.Namespace(t)
	c, r := startReconciler(t, argocd, time.Hour)
	repo, key, _ := createConfigMapApp(t, c, argocd, "resynced")
	waitApp(t, c, key, "auto-synced", statusIs(v1alpha1.SyncStatusCodeSynced, v1alpha1.HealthStatusHealthy))
	// Settled: the created object's watch event has been compared.
	compareUntilReused(t, r, argocd, key.Name, "after the first sync")

	computed := comparisonsCounted(t, argocd, comparisonComputed)
	sha := commitConfigMapChange(repo)
	r.Repo.Forget(repo.URL())
	r.enqueueCompare(key.Name)
	waitApp(t, c, key, "the commit synced", func(a *v1alpha1.Application) bool {
		return a.Operation == nil && a.Status.OperationState != nil &&
			a.Status.OperationState.Phase == v1alpha1.OperationSucceeded &&
			a.Status.OperationState.SyncResult != nil && a.Status.OperationState.SyncResult.Revision == sha
	})
	reused := reusedComparisons(t, argocd)
	for i := range 3 {
		r.enqueueCompare(key.Name)
		waitReused(t, argocd, reused, i+1, "a comparison after the sync")
	}
	if got := comparisonsCounted(t, argocd, comparisonComputed) - computed; got != 1 {
		t.Errorf("%v comparisons computed from the commit on, want 1 (the one that found it)", got)
	}
}
