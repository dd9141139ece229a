package main

import (
	"context"
	"errors"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/skiffcd/skiff/internal/cli/appcli"
	"github.com/skiffcd/skiff/internal/clusters"
	"github.com/skiffcd/skiff/internal/testcluster"
)

// `skiff app create --core` accepts a destination a cluster Secret
// registers, by server or name, and refuses an unknown one as the
// controller would.
func TestAppCreateResolvesRegisteredClusters(t *testing.T) {
	t.Parallel()
	dest := cluster.Namespace(t)
	url := commitRepo(t, map[string]string{"app/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\n"})
	east := clusters.Cluster{Name: "cli-east", Server: "https://cli-east.invalid:6443",
		Config: clusters.Config{BearerToken: "not-used"}}
	secret, err := east.ToSecret(appNamespace)
	if err != nil {
		t.Fatal(err)
	}
	k8s := kube(t)
	if err := k8s.Create(context.Background(), secret); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = k8s.Delete(context.Background(), secret) })

	out, err := skiff(t, "create", "to-unknown", "--repo", url, "--path", "app", "--dest-namespace", dest,
		"--dest-server", "https://cli-west.invalid:6443")
	if err == nil {
		t.Fatalf("an unknown cluster was accepted:\n%s", out)
	}
	wantContains(t, err.Error(), `cluster "https://cli-west.invalid:6443" is not configured`)
	mustSkiff(t, "create", "to-east", "--repo", url, "--path", "app", "--dest-namespace", dest, "--dest-server", east.Server)
	mustSkiff(t, "delete", "to-east", "--cascade=false", "-y")
}

// `skiff app diff --core` of an app in a registered cluster compares git
// with that cluster's objects, not those of the cluster it runs against.
func TestAppDiffReadsTheAppsCluster(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	east, err := testcluster.Start(ctx, testcluster.Options{})
	if east != nil {
		t.Cleanup(east.Stop)
	}
	if err != nil {
		t.Fatal(err)
	}
	dest := cluster.Namespace(t)
	settings := func(level string) *corev1.ConfigMap {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: dest, Name: "settings"}, Data: map[string]string{"level": level}}
	}
	// Git and the local cluster agree; east differs.
	url := commitRepo(t, map[string]string{"app/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\ndata: {level: info}\n"})
	if err := kube(t).Create(ctx, settings("info")); err != nil {
		t.Fatal(err)
	}
	if err := east.Client(t).Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: dest}}); err != nil {
		t.Fatal(err)
	}
	if err := east.Client(t).Create(ctx, settings("debug")); err != nil {
		t.Fatal(err)
	}
	registered := clusters.Cluster{Name: "diff-east", Server: east.Config.Host, Config: clusters.Config{
		BearerToken: east.Config.BearerToken, TLSClientConfig: clusters.TLSClientConfig{CAData: east.Config.CAData}}}
	secret, err := registered.ToSecret(appNamespace)
	if err != nil {
		t.Fatal(err)
	}
	if err := kube(t).Create(ctx, secret); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = kube(t).Delete(context.Background(), secret) })

	mustSkiff(t, "create", "diff-east", "--repo", url, "--path", "app", "--dest-namespace", dest, "--dest-server", east.Config.Host)
	t.Cleanup(func() { _, _ = skiff(t, "delete", "diff-east", "--cascade=false", "-y") })
	out, err := skiff(t, "diff", "diff-east", "--cache-dir", t.TempDir())
	var exit *appcli.ExitError
	if !errors.As(err, &exit) || exit.Code != 1 {
		t.Fatalf("diff against east's ConfigMap: got %v, want exit code 1\n%s", err, out)
	}
	wantContains(t, out, "===== /ConfigMap "+dest+"/settings ======", "debug")
}
