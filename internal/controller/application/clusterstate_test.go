package application

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/discovery"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/skiffcd/skiff/api/v1alpha1"
	"github.com/skiffcd/skiff/internal/clusters"
	"github.com/skiffcd/skiff/internal/testcluster"
	"github.com/skiffcd/skiff/internal/testgit"
	"github.com/skiffcd/skiff/internal/testwait"
)

func TestConnection(t *testing.T) {
	tests := map[string]struct {
		probeErr        error
		filled          bool
		failing         []string
		skipped         []string
		status, message string
	}{
		"a filled cache of a cluster that answers is Successful": {filled: true, status: clusters.ConnectionSuccessful},
		"a cluster that does not answer has Failed, with the probe's error": {probeErr: errors.New("connection refused"), filled: true,
			status: clusters.ConnectionFailed, message: "connection refused"},
		"a cache that is filling is Unknown": {status: clusters.ConnectionUnknown, message: "connecting: the watch cache is filling"},
		"a cache that cannot fill for a refused list has Failed, with the refusal": {failing: []string{"listing secrets: forbidden"},
			status: clusters.ConnectionFailed, message: "listing secrets: forbidden"},
		"several refusals name the first and count the others": {failing: []string{"listing pods: forbidden", "listing secrets: forbidden", "watching services: forbidden"},
			status: clusters.ConnectionFailed, message: "listing pods: forbidden (and 2 more)"},
		"a watch that fails once the cache is filled does not fail the cluster": {filled: true, failing: []string{"watching pods: EOF"},
			status: clusters.ConnectionSuccessful},
		"kinds skipped for respectRBAC are named on a Successful cluster": {filled: true, skipped: []string{"Secret: forbidden", "batch/Job: forbidden"},
			status: clusters.ConnectionSuccessful, message: "not watched for resource.respectRBAC: Secret: forbidden (and 1 more)"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			status, message := connection(tc.probeErr, tc.filled, tc.failing, tc.skipped)
			if status != tc.status || message != tc.message {
				t.Errorf("connection = %q, %q; want %q, %q", status, message, tc.status, tc.message)
			}
		})
	}
}

func TestMajorMinor(t *testing.T) {
	tests := map[string]struct{ git, want string }{
		"a release is major.minor":                  {git: "v1.35.2", want: "1.35"},
		"a provider's build is its major.minor":     {git: "v1.29.4-eks-036c24b", want: "1.29"},
		"an unstamped build is 0.0":                 {git: "v0.0.0-master+$Format:%H$", want: "0.0"},
		"a version that cannot be read stays as is": {git: "unknown", want: "unknown"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := majorMinor(tc.git); got != tc.want {
				t.Errorf("majorMinor(%q) = %q, want %q", tc.git, got, tc.want)
			}
		})
	}
}

// ClusterStates follows the clusters in use: the local one and a
// registered one with their versions, caches and app counts; a registered
// one no app uses is Unknown, not monitored. The registered cluster's API
// server stopped, its state is Failed with the error; restarted, it is
// Successful again; when its last app goes, it is no longer monitored.
func TestClusterStatesFollowTheClustersInUse(t *testing.T) {
	ctx := context.Background()
	east := startCluster(t)
	argocd := cluster.Namespace(t)
	reg := startSecretsRegistry(t, argocd)
	const idle = "https://idle.example.invalid"
	register(t, argocd, registered("east", east), clusters.Cluster{Name: "idle", Server: idle, Config: clusters.Config{BearerToken: "idle-token"}})
	c, rec := startReconciler(t, argocd, 2*time.Second, func(r *Reconciler) {
		r.Clusters = reg
		r.Connect = testConnector(t)
	})
	repo := testgit.New(t)
	repo.Commit(map[string]string{"cm/a.yaml": configMap("a")})
	var keys []client.ObjectKey
	for name, dest := range map[string]v1alpha1.ApplicationDestination{
		"state-local":  {Server: clusters.InClusterServer, Namespace: cluster.Namespace(t)},
		"state-east":   {Name: "east", Namespace: east.Namespace(t)},
		"state-east-2": {Name: "east", Namespace: east.Namespace(t)},
	} {
		app := newApp(argocd, name, repo.URL(), "cm", "", &v1alpha1.SyncPolicy{Automated: &v1alpha1.SyncPolicyAutomated{}})
		app.Spec.Destination = dest
		if err := c.Create(ctx, app); err != nil {
			t.Fatal(err)
		}
		keys = append(keys, client.ObjectKeyFromObject(app))
	}
	for _, key := range keys {
		waitApp(t, c, key, "the first sync of "+key.Name, statusIs(v1alpha1.SyncStatusCodeSynced, v1alpha1.HealthStatusHealthy))
	}

	wantVersion := func(tc *testcluster.Cluster) string {
		v, err := discovery.NewDiscoveryClientForConfigOrDie(tc.Config).ServerVersion()
		if err != nil {
			t.Fatal(err)
		}
		return majorMinor(v.GitVersion)
	}
	states := statesByServer(rec)
	for server, want := range map[string]struct {
		version string
		apps    int
	}{clusters.InClusterServer: {wantVersion(cluster), 1}, east.Config.Host: {wantVersion(east), 2}} {
		got := states[server].Info
		if got.ConnectionState.Status != clusters.ConnectionSuccessful || got.ServerVersion != want.version || got.ApplicationsCount != want.apps ||
			got.CacheInfo.ResourcesCount == 0 || got.CacheInfo.APIsCount == 0 || got.CacheInfo.LastCacheSyncTime == nil {
			t.Errorf("%s: %+v, want Successful, version %s, %d apps, a filled cache", server, got, want.version, want.apps)
		}
	}
	if got := states[east.Config.Host].Info.ConnectionState.AttemptedAt; got == nil {
		t.Error("east's state has no attemptedAt")
	}
	if got := states[idle].Info; got.ConnectionState.Status != clusters.ConnectionUnknown || got.ConnectionState.Message != clusters.NotMonitored || got.ApplicationsCount != 0 {
		t.Errorf("the idle cluster: %+v, want Unknown and not monitored", got)
	}

	east.StopAPIServer()
	testwait.Eventually(t, "east Failed", func() error {
		got := statesByServer(rec)[east.Config.Host].Info.ConnectionState
		if got.Status != clusters.ConnectionFailed || got.Message == "" {
			return fmt.Errorf("%+v", got)
		}
		if strings.Contains(got.Message, east.Config.BearerToken) {
			t.Fatalf("the message shows the token: %s", got.Message)
		}
		return nil
	}, testwait.Timeout(clusterWait))
	if err := east.RestartAPIServer(ctx); err != nil {
		t.Fatal(err)
	}
	testwait.Eventually(t, "east Successful again", func() error {
		got := statesByServer(rec)[east.Config.Host].Info
		if got.ConnectionState.Status != clusters.ConnectionSuccessful || got.ApplicationsCount != 2 {
			return fmt.Errorf("%+v", got)
		}
		return nil
	}, testwait.Timeout(clusterWait))

	for _, key := range keys {
		if !strings.HasPrefix(key.Name, "state-east") {
			continue
		}
		app := &v1alpha1.Application{}
		app.Namespace, app.Name = key.Namespace, key.Name
		if err := c.Delete(ctx, app); err != nil {
			t.Fatal(err)
		}
	}
	testwait.Eventually(t, "east no longer monitored", func() error {
		got := statesByServer(rec)[east.Config.Host].Info
		if got.ConnectionState.Status != clusters.ConnectionUnknown || got.ConnectionState.Message != clusters.NotMonitored || got.ApplicationsCount != 0 {
			return fmt.Errorf("%+v", got)
		}
		return nil
	}, testwait.Timeout(clusterWait))
}

func statesByServer(r *Reconciler) map[string]clusters.State {
	out := map[string]clusters.State{}
	for _, s := range r.ClusterStates() {
		out[s.Server] = s
	}
	return out
}
