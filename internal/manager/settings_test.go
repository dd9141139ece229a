package manager

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/skiffcd/skiff/api/v1alpha1"
	"github.com/skiffcd/skiff/internal/argocdcm"
	"github.com/skiffcd/skiff/internal/server"
	"github.com/skiffcd/skiff/internal/testcluster"
	"github.com/skiffcd/skiff/internal/testgit"
	"github.com/skiffcd/skiff/internal/testwait"
)

// runManager runs the manager for Skiff's namespace ns until the test
// ends; with api, its API server too (plain HTTP on a loopback port), whose
// base URL it returns.
func runManager(t *testing.T, ns string, api bool) string {
	t.Helper()
	ctrl.SetLogger(logr.Discard())
	opts := Options{
		Namespace: ns, Namespaced: true, MetricsAddr: "0", HealthAddr: "0",
		CacheDir: t.TempDir(), RefreshPeriod: 3 * time.Second,
	}
	base := ""
	if api {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		opts.API = server.Options{Addr: ln.Addr().String(), Listener: ln, Insecure: true}
		base = "http://" + ln.Addr().String()
	}
	runCtx, stop := context.WithCancel(context.Background())
	exited := make(chan error, 1)
	go func() {
		exited <- Run(runCtx, cluster.Config, opts)
	}()
	t.Cleanup(func() {
		stop()
		select {
		case err := <-exited:
			if err != nil {
				t.Errorf("manager: %v", err)
			}
		case <-time.After(30 * time.Second):
			t.Error("the manager did not stop within 30 s")
		}
	})
	return base
}

// argocd-cm's kustomize.buildOptions apply to every app without a restart:
// a kustomization that reads a file beside its directory fails to render
// until the load restrictor is turned off there; a flag Skiff cannot
// honour is a Warning Event on argocd-cm and the others still apply.
func TestKustomizeBuildOptionsApplyWithoutARestart(t *testing.T) {
	ctx := context.Background()
	ns := cluster.Namespace(t)
	c := cluster.Client(t)
	runManager(t, ns, false)

	repo := testgit.New(t)
	repo.Commit(map[string]string{
		"app/kustomization.yaml": "resources: [../shared/config.yaml]\n",
		"shared/config.yaml":     "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: shared-config}\ndata: {level: info}\n",
	})
	app := &v1alpha1.Application{
		ObjectMeta: metav1.ObjectMeta{Name: "beside", Namespace: ns},
		Spec: v1alpha1.ApplicationSpec{
			Project:     "default",
			Source:      &v1alpha1.ApplicationSource{RepoURL: repo.URL(), Path: "app", TargetRevision: "HEAD"},
			Destination: v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: ns},
			SyncPolicy:  &v1alpha1.SyncPolicy{Automated: &v1alpha1.SyncPolicyAutomated{}},
		},
	}
	if err := c.Create(ctx, app); err != nil {
		t.Fatal(err)
	}
	waitApp(t, c, app, "a ComparisonError naming the file beside it", conditionSays(v1alpha1.ApplicationConditionComparisonError, "shared/config.yaml"))

	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: argocdcm.ConfigMapName, Namespace: ns},
		Data:       map[string]string{"kustomize.buildOptions": "--enable-helm --load-restrictor LoadRestrictionsNone"},
	}
	if err := c.Create(ctx, cm); err != nil {
		t.Fatal(err)
	}
	waitApp(t, c, app, "Synced", func(app *v1alpha1.Application) error {
		if app.Status.Sync.Status != v1alpha1.SyncStatusCodeSynced {
			return fmt.Errorf("sync status %s", app.Status.Sync.Status)
		}
		return nil
	})
	var shared corev1.ConfigMap
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "shared-config"}, &shared); err != nil {
		t.Fatalf("the ConfigMap beside the kustomization after the sync: %v", err)
	}
	testwait.Eventually(t, "a Warning Event on argocd-cm about --enable-helm", func() error {
		var events eventsv1.EventList
		if err := c.List(ctx, &events, client.InNamespace(ns)); err != nil {
			return err
		}
		for _, e := range events.Items {
			if e.Regarding.Name == argocdcm.ConfigMapName && e.Type == corev1.EventTypeWarning && strings.Contains(e.Note, "kustomize.buildOptions: --enable-helm is not supported") {
				return nil
			}
		}
		return fmt.Errorf("none among %d Events", len(events.Items))
	}, testwait.Timeout(30*time.Second))
}

// A resource action argocd-cm defines in Lua runs through the API on a
// resource of an app, and the built-in set of its kind gives way to it.
func TestArgoCDConfigMapActionsRunThroughTheAPI(t *testing.T) {
	ctx := context.Background()
	ns := cluster.Namespace(t)
	c := cluster.Client(t)
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: argocdcm.ConfigMapName, Namespace: ns}}
	testcluster.ReadYAML(t, "testdata/actions-argocd-cm.yaml", cm, ns)
	if err := c.Create(ctx, cm); err != nil {
		t.Fatal(err)
	}
	base := runManager(t, ns, true)

	repo := testgit.New(t)
	repo.Commit(map[string]string{
		"app/config.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: stamped-config}\ndata: {level: info}\n",
	})
	app := &v1alpha1.Application{
		ObjectMeta: metav1.ObjectMeta{Name: "stamps", Namespace: ns},
		Spec: v1alpha1.ApplicationSpec{
			Project:     "default",
			Source:      &v1alpha1.ApplicationSource{RepoURL: repo.URL(), Path: "app", TargetRevision: "HEAD"},
			Destination: v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: ns},
			SyncPolicy:  &v1alpha1.SyncPolicy{Automated: &v1alpha1.SyncPolicyAutomated{}},
		},
	}
	if err := c.Create(ctx, app); err != nil {
		t.Fatal(err)
	}
	waitApp(t, c, app, "Synced", func(app *v1alpha1.Application) error {
		if app.Status.Sync.Status != v1alpha1.SyncStatusCodeSynced {
			return fmt.Errorf("sync status %s", app.Status.Sync.Status)
		}
		return nil
	})

	var initial corev1.Secret
	testwait.Eventually(t, "the API server's initial admin password", func() error {
		return c.Get(ctx, client.ObjectKey{Namespace: ns, Name: server.InitialAdminSecretName}, &initial)
	})
	token := apiLogin(t, base, string(initial.Data["password"]))
	query := "?namespace=" + ns + "&resourceName=stamped-config&kind=ConfigMap&version=v1"
	var listed struct {
		Actions []struct {
			Name     string `json:"name"`
			Disabled bool   `json:"disabled"`
		} `json:"actions"`
	}
	if status := apiCall(t, http.MethodGet, base+"/api/v1/applications/stamps/resource/actions"+query, token, nil, &listed); status != http.StatusOK {
		t.Fatalf("listing the actions: %d", status)
	}
	if len(listed.Actions) != 1 || listed.Actions[0].Name != "stamp" || listed.Actions[0].Disabled {
		t.Fatalf("actions %+v, want argocd-cm's stamp alone", listed.Actions)
	}
	if status := apiCall(t, http.MethodPost, base+"/api/v1/applications/stamps/resource/actions"+query, token, "stamp", nil); status != http.StatusOK {
		t.Fatalf("running stamp: %d", status)
	}
	var stamped corev1.ConfigMap
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "stamped-config"}, &stamped); err != nil {
		t.Fatal(err)
	}
	if stamped.Labels["stamped"] != "by-lua" {
		t.Errorf("labels after the action: %v, want stamped=by-lua", stamped.Labels)
	}
}
