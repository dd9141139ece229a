package application

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/skiffcd/skiff/api/v1alpha1"
	"github.com/skiffcd/skiff/internal/argocdcm"
	"github.com/skiffcd/skiff/internal/clusters"
	"github.com/skiffcd/skiff/internal/testgit"
	"github.com/skiffcd/skiff/internal/testwait"
)

// A cluster registered with credentials that may not list Secrets: without
// resource.respectRBAC (Argo CD's default) its watch cache cannot fill, and
// both the cluster's state and its app's condition name the refused list
// instead of a bare "connecting". Set to normal in argocd-cm, live, the
// cache skips Secrets and the app syncs its ConfigMap, leaving out its
// Secret with a warning (it could neither compare nor prune it); the
// cluster's state is Successful and names the kind it does not watch.
func TestRespectRBACNormalSkipsAKindTheClusterRefuses(t *testing.T) {
	ctx := context.Background()
	argocd, dest := cluster.Namespace(t), cluster.Namespace(t)
	restricted := registered("restricted", cluster)
	restricted.Config.BearerToken = cluster.ConfigWithout(t, argocd, "secrets").BearerToken
	reg := startSecretsRegistry(t, argocd)
	register(t, argocd, restricted)
	settings := startSettings(t, argocd)
	c, rec, _ := startReconcilerWithSettings(t, argocd, 2*time.Second, settings, func(r *Reconciler) {
		r.Clusters = reg
		r.Connect = testConnectorWith(t, settings)
	})

	repo := testgit.New(t)
	repo.Commit(map[string]string{"cm/a.yaml": configMap("a"),
		"cm/s.yaml": "apiVersion: v1\nkind: Secret\nmetadata:\n  name: s\nstringData:\n  k: v\n"})
	app := newApp(argocd, "rbac-cms", repo.URL(), "cm", "", &v1alpha1.SyncPolicy{Automated: &v1alpha1.SyncPolicyAutomated{}})
	app.Spec.Destination = v1alpha1.ApplicationDestination{Name: "restricted", Namespace: dest}
	if err := c.Create(ctx, app); err != nil {
		t.Fatal(err)
	}
	key := client.ObjectKeyFromObject(app)
	waitApp(t, c, key, "the refused list of Secrets in the app's condition", func(a *v1alpha1.Application) bool {
		return a.Status.Sync.Status == v1alpha1.SyncStatusCodeUnknown &&
			conditionSays(a, v1alpha1.ApplicationConditionComparisonError, "cluster restricted: connecting: listing secrets: ")
	})
	state := statesByServer(rec)[restricted.Server].Info.ConnectionState
	if state.Status != clusters.ConnectionFailed || !strings.HasPrefix(state.Message, "listing secrets: ") || !strings.Contains(state.Message, "forbidden") {
		t.Errorf("the restricted cluster's state: %+v, want Failed naming the refused list of secrets", state)
	}
	if configMapExists(t, cluster.Client(t), dest, "a") {
		t.Error("the app synced while its cluster's cache could not fill")
	}

	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: argocdcm.ConfigMapName, Namespace: argocd},
		Data: map[string]string{"resource.respectRBAC": "normal"}}
	if err := c.Create(ctx, cm); err != nil {
		t.Fatal(err)
	}
	waitApp(t, c, key, "the app synced once Secrets are skipped", statusIs(v1alpha1.SyncStatusCodeSynced, v1alpha1.HealthStatusHealthy))
	wantConfigMaps(t, cluster.Client(t), dest, "rbac-cms", "a")
	synced := &v1alpha1.Application{}
	if err := c.Get(ctx, key, synced); err != nil {
		t.Fatal(err)
	}
	if got := conditionMessage(synced, v1alpha1.ApplicationConditionExcludedResourceWarning); got != "Resource /Secret s is not watched: the cluster's credentials may not list it (resource.respectRBAC)" {
		t.Errorf("the app's ExcludedResourceWarning = %q, want the Secret named", got)
	}
	if err := cluster.Client(t).Get(ctx, client.ObjectKey{Namespace: dest, Name: "s"}, &corev1.Secret{}); !apierrors.IsNotFound(err) {
		t.Errorf("reading the Secret left out: %v, want not found", err)
	}
	testwait.Eventually(t, "the cluster Successful, naming the skipped kind", func() error {
		got := statesByServer(rec)[restricted.Server].Info.ConnectionState
		if got.Status != clusters.ConnectionSuccessful || !strings.HasPrefix(got.Message, "not watched for resource.respectRBAC: Secret: ") {
			return fmt.Errorf("%+v", got)
		}
		return nil
	})
}
