package application

import (
	"context"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/skiffcd/skiff/api/v1alpha1"
)

// The CRD does not type the status, so a user can store a status field of
// the wrong type. The app still decodes, the controller removes that field,
// and the app goes on syncing new commits.
func TestAStatusFieldOfTheWrongTypeIsRemoved(t *testing.T) {
	ctx := context.Background()
	c, key, _, repo := autoSyncedApp(t, "unreadable-status", &v1alpha1.SyncPolicyAutomated{Prune: true})

	bad := client.RawPatch(types.MergePatchType, []byte(`{"status":{"history":"not a list"}}`))
	if err := c.Patch(ctx, &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Name: key.Name, Namespace: key.Namespace}}, bad); err != nil {
		t.Fatalf("the API server refused a status field of the wrong type: %v", err)
	}
	app := &v1alpha1.Application{}
	if err := c.Get(ctx, key, app); err != nil {
		t.Fatalf("the Application did not decode: %v", err)
	}
	if fields, _ := app.Status.Unreadable(); len(fields) != 1 || fields[0] != "history" {
		t.Fatalf("unreadable status fields %v, want [history]", fields)
	}

	waitApp(t, c, key, "the wrong field removed", func(a *v1alpha1.Application) bool {
		fields, _ := a.Status.Unreadable()
		return len(fields) == 0 && a.Status.Sync.Status == v1alpha1.SyncStatusCodeSynced
	})
	sha := repo.Commit(map[string]string{"app/a.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\ndata: {k: after}\n"})
	waitApp(t, c, key, "the next commit synced", func(a *v1alpha1.Application) bool {
		return a.Status.Sync.Revision == sha && a.Status.Sync.Status == v1alpha1.SyncStatusCodeSynced &&
			len(a.Status.History) > 0 && a.Status.History[len(a.Status.History)-1].Revision == sha
	})
}
