package manager

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/skiffcd/skiff/api/v1alpha1"
	"github.com/skiffcd/skiff/internal/appsetops"
	"github.com/skiffcd/skiff/internal/clustercache"
	"github.com/skiffcd/skiff/internal/clusters"
	"github.com/skiffcd/skiff/internal/testcluster"
	"github.com/skiffcd/skiff/internal/testgit"
	"github.com/skiffcd/skiff/internal/testwait"
)

// matrixWait bounds the waits for apps synced on two control planes, the
// second one's watch cache started on its first app.
const matrixWait = 2 * time.Minute

// A Matrix of git config files × clusters makes, with skiff server's real
// generators, an app per app directory and cluster: each names its
// cluster's server and the namespace its config file gives, becomes
// Synced, and its ConfigMap is written in its own control plane (read
// there, tracked to it). A config file committed later, with the refresh
// annotation a push sets, adds its app on both planes.
func TestApplicationSetMatrixOfGitFilesAndClusters(t *testing.T) {
	saved := generateApplications
	generateApplications = nil // the real generators
	t.Cleanup(func() { generateApplications = saved })
	ctx := context.Background()
	staging, err := testcluster.Start(ctx, testcluster.Options{})
	if staging != nil {
		t.Cleanup(staging.Stop)
	}
	if err != nil {
		t.Fatal(err)
	}
	ns := cluster.Namespace(t)
	c := cluster.Client(t)
	secret, err := clusters.Cluster{Name: "staging", Server: staging.Config.Host, Labels: map[string]string{"env": "staging"},
		Config: clusters.Config{BearerToken: staging.Config.BearerToken, TLSClientConfig: clusters.TLSClientConfig{CAData: staging.Config.CAData}},
	}.ToSecret(ns)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Create(ctx, secret); err != nil {
		t.Fatal(err)
	}
	// The apps' namespaces, made by CreateNamespace: the shared local
	// control plane drops them after the test; staging stops with it.
	namespaceOf := func(app string) string { return ns + "-" + app }
	t.Cleanup(func() {
		for _, app := range []string{"web", "api", "cache"} {
			_ = c.Delete(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespaceOf(app)}})
		}
	})
	appDir := func(app string) map[string]string {
		return map[string]string{
			"apps/" + app + "/config.json":             fmt.Sprintf("{\"namespace\": %q}\n", namespaceOf(app)),
			"apps/" + app + "/manifests/settings.yaml": fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: %s-settings\ndata:\n  app: %s\n", app, app),
		}
	}
	repo := testgit.New(t)
	repo.Commit(appDir("web"))
	repo.Commit(appDir("api"))
	// The apps' periodic comparisons, which would resolve HEAD anew, wait
	// past the test: only the refresh may show the set the new commit.
	runManager(t, cluster.Config, Options{Namespace: ns, LeaderElection: true, RefreshPeriod: 10 * time.Minute}, false)
	set := &v1alpha1.ApplicationSet{}
	testcluster.ReadYAML(t, "testdata/appset-matrix.yaml", set, ns)
	set.Spec.Generators[0].Matrix.Generators[0].Git.RepoURL = repo.URL()
	set.Spec.Template.Spec.Source.RepoURL = repo.URL()
	if err := c.Create(ctx, set); err != nil {
		t.Fatal(err)
	}

	planes := map[string]struct {
		server string
		client client.Client
	}{
		clusters.InClusterName: {clusters.InClusterServer, c},
		"staging":              {staging.Config.Host, staging.Client(t)},
	}
	// deployed checks that the apps are exactly those of apps × planes,
	// each aimed at its plane and namespace, Synced, with its ConfigMap
	// in that plane.
	deployed := func(apps ...string) func() error {
		return func() error {
			want := map[string]v1alpha1.ApplicationDestination{}
			for _, app := range apps {
				for plane, p := range planes {
					want[app+"-"+plane] = v1alpha1.ApplicationDestination{Server: p.server, Namespace: namespaceOf(app)}
				}
			}
			got, items, err := appsOf(ctx, c, ns)
			if err != nil {
				return err
			}
			if names := slices.Sorted(maps.Keys(want)); !slices.Equal(got, names) {
				return fmt.Errorf("apps %v, want %v", got, names)
			}
			for _, a := range items {
				if a.Spec.Destination != want[a.Name] {
					return fmt.Errorf("app %s aims at %+v, want %+v", a.Name, a.Spec.Destination, want[a.Name])
				}
				if a.Status.Sync.Status != v1alpha1.SyncStatusCodeSynced {
					return fmt.Errorf("app %s is %q: %+v", a.Name, a.Status.Sync.Status, a.Status.Conditions)
				}
			}
			for _, app := range apps {
				for plane, p := range planes {
					cm := &corev1.ConfigMap{}
					if err := p.client.Get(ctx, client.ObjectKey{Namespace: namespaceOf(app), Name: app + "-settings"}, cm); err != nil {
						return fmt.Errorf("%s's ConfigMap in %s: %w", app, plane, err)
					}
					if owner := app + "-" + plane; !strings.HasPrefix(cm.Annotations[clustercache.TrackingAnnotation], owner+":") {
						return fmt.Errorf("%s's ConfigMap in %s is tracked as %q, want app %s's", app, plane, cm.Annotations[clustercache.TrackingAnnotation], owner)
					}
				}
			}
			return nil
		}
	}
	testwait.Eventually(t, "an app per config file and cluster, synced in its own plane", deployed("api", "web"), testwait.Timeout(matrixWait))

	repo.Commit(appDir("cache"))
	patch := []byte(`{"metadata":{"annotations":{"` + appsetops.RefreshAnnotation + `":"true"}}}`)
	if err := c.Patch(ctx, set, client.RawPatch(types.MergePatchType, patch)); err != nil {
		t.Fatal(err)
	}
	testwait.Eventually(t, "the committed config file's apps on both planes after a refresh", deployed("api", "cache", "web"), testwait.Timeout(matrixWait))
}
