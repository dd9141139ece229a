package application

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/skiffcd/skiff/api/v1alpha1"
	"github.com/skiffcd/skiff/internal/syncengine"
)

func TestApplyOutOfSyncOnly(t *testing.T) {
	automated := &v1alpha1.Operation{InitiatedBy: v1alpha1.OperationInitiator{Automated: true}}
	manual := &v1alpha1.Operation{InitiatedBy: v1alpha1.OperationInitiator{Username: "admin"}}
	ignore := []v1alpha1.ResourceIgnoreDifferences{{Kind: "Deployment", JSONPointers: []string{"/spec/replicas"}}}
	tests := map[string]struct {
		op      *v1alpha1.Operation
		ignore  []v1alpha1.ResourceIgnoreDifferences
		option  bool
		respect bool
		want    bool
	}{
		"an automated sync leaves synced objects alone":                    {op: automated, want: true},
		"an automated sync of an app with ignoreDifferences applies all":   {op: automated, ignore: ignore},
		"a manual sync applies all":                                        {op: manual},
		"a manual sync with ApplyOutOfSyncOnly=true leaves synced objects": {op: manual, option: true, want: true},
		"the option holds with ignoreDifferences too, as in Argo CD":       {op: manual, ignore: ignore, option: true, want: true},
		"no operation (defensive) applies all":                             {},
		// Synced then means equal but for fields the sync would keep as they are.
		"with RespectIgnoreDifferences an automated sync leaves synced objects alone again": {op: automated, ignore: ignore, respect: true, want: true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			app := &v1alpha1.Application{Operation: tc.op}
			app.Spec.IgnoreDifferences = tc.ignore
			opts := syncengine.DefaultOptions()
			opts.ApplyOutOfSyncOnly = tc.option
			opts.RespectIgnoreDifferences = tc.respect
			if got := applyOutOfSyncOnly(app, opts); got != tc.want {
				t.Errorf("applyOutOfSyncOnly = %v, want %v", got, tc.want)
			}
		})
	}
}

// A commit that changes one of an app's objects: the automated sync applies
// that object and leaves the synced one alone (no dry run, no apply).
func TestAutoSyncAppliesOnlyTheChangedObject(t *testing.T) {
	ctx := context.Background()
	c, key, dest, repo := autoSyncedApp(t, "changed-only", &v1alpha1.SyncPolicyAutomated{Prune: true, SelfHeal: true})
	get := func(name string) *corev1.ConfigMap {
		t.Helper()
		cm := &corev1.ConfigMap{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: dest, Name: name}, cm); err != nil {
			t.Fatal(err)
		}
		return cm
	}
	a0, b0 := get("a"), get("b")

	sha := repo.Commit(map[string]string{"app/a.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\ndata: {k: changed}\n"})
	app := waitApp(t, c, key, "the commit synced", func(a *v1alpha1.Application) bool {
		op := a.Status.OperationState
		return a.Status.Sync.Revision == sha && a.Status.Sync.Status == v1alpha1.SyncStatusCodeSynced &&
			op != nil && op.Phase == v1alpha1.OperationSucceeded && op.SyncResult != nil && op.SyncResult.Revision == sha
	})
	a1, b1 := get("a"), get("b")
	if a1.Data["k"] != "changed" || a1.ResourceVersion == a0.ResourceVersion {
		t.Errorf("the changed ConfigMap was not applied: data %v, resourceVersion %s → %s", a1.Data, a0.ResourceVersion, a1.ResourceVersion)
	}
	if b1.ResourceVersion != b0.ResourceVersion {
		t.Errorf("the synced ConfigMap was written: resourceVersion %s → %s", b0.ResourceVersion, b1.ResourceVersion)
	}
	messages := map[string]string{}
	for _, res := range app.Status.OperationState.SyncResult.Resources {
		messages[res.Name] = res.Message
	}
	if messages["b"] != "unchanged" || messages["a"] != "configmap configured" {
		t.Errorf("sync results: a %q, b %q; want a configured and b unchanged", messages["a"], messages["b"])
	}
}
