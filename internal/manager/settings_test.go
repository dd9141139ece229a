package manager

import (
	"context"
	"fmt"
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
	"github.com/skiffcd/skiff/internal/testgit"
	"github.com/skiffcd/skiff/internal/testwait"
)

// runManager runs the manager for Skiff's namespace ns, without its API
// server, until the test ends.
func runManager(t *testing.T, ns string) {
	t.Helper()
	ctrl.SetLogger(logr.Discard())
	runCtx, stop := context.WithCancel(context.Background())
	exited := make(chan error, 1)
	go func() {
		exited <- Run(runCtx, cluster.Config, Options{
			Namespace: ns, Namespaced: true, MetricsAddr: "0", HealthAddr: "0",
			CacheDir: t.TempDir(), RefreshPeriod: 3 * time.Second,
		})
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
}

// argocd-cm's kustomize.buildOptions apply to every app without a restart:
// a kustomization that reads a file beside its directory fails to render
// until the load restrictor is turned off there; a flag Skiff cannot
// honour is a Warning Event on argocd-cm and the others still apply.
func TestKustomizeBuildOptionsApplyWithoutARestart(t *testing.T) {
	ctx := context.Background()
	ns := cluster.Namespace(t)
	c := cluster.Client(t)
	runManager(t, ns)

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
