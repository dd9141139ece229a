package main

import (
	"context"
	"testing"

	"github.com/skiffcd/skiff/internal/clusters"
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
