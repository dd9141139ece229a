package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/skiffcd/skiff/internal/clusters"
	"github.com/skiffcd/skiff/internal/testcluster"
)

// twoContexts writes a kubeconfig whose current context "skiff" reaches
// the test cluster and whose context "target" reaches target.
func twoContexts(t *testing.T, target *rest.Config) string {
	t.Helper()
	kc := clientcmdapi.NewConfig()
	for name, cfg := range map[string]*rest.Config{"skiff": cluster.Config, "target": target} {
		kc.Clusters[name] = &clientcmdapi.Cluster{Server: cfg.Host, CertificateAuthorityData: cfg.CAData, InsecureSkipTLSVerify: cfg.Insecure}
		kc.AuthInfos[name] = &clientcmdapi.AuthInfo{Token: cfg.BearerToken, ClientCertificateData: cfg.CertData, ClientKeyData: cfg.KeyData}
		kc.Contexts[name] = &clientcmdapi.Context{Cluster: name, AuthInfo: name}
	}
	kc.CurrentContext = "skiff"
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*kc, path); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestClusterAddThroughBothBackends adds a real second control plane from a
// kubeconfig context with --core, then lists, reads, rotates and removes
// it through the API server, whose RBAC applies.
func TestClusterAddThroughBothBackends(t *testing.T) {
	t.Parallel()
	second, err := testcluster.Start(context.Background(), testcluster.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(second.Stop)
	kubeconfig := twoContexts(t, second.Config)
	c := kube(t)
	ns := cluster.Namespace(t)
	admin, viewer := adminAndViewer(t, c, ns)
	mustSkiff := mustWith(t, runSkiff)

	if _, err := runSkiff("cluster", "add", "target", "--kubeconfig", kubeconfig, "-N", ns); err == nil {
		t.Error("add without --yes and no answer went ahead")
	}
	out := mustSkiff("cluster", "add", "target", "--kubeconfig", kubeconfig, "-N", ns, "--yes", "--label", "env=test", "--project", "default")
	wantContains(t, out, "Cluster '"+second.Config.Host+"' added")
	if _, err := runSkiff("cluster", "add", "target", "--kubeconfig", kubeconfig, "-N", ns, "--yes"); err == nil || !strings.Contains(err.Error(), "--upsert") {
		t.Errorf("adding it again: %v, want a hint at --upsert", err)
	}

	var secrets corev1.SecretList
	if err := c.List(context.Background(), &secrets, client.InNamespace(ns), client.MatchingLabels{clusters.SecretTypeLabel: clusters.SecretTypeCluster}); err != nil {
		t.Fatal(err)
	}
	if len(secrets.Items) != 1 {
		t.Fatalf("%d cluster Secrets, want 1", len(secrets.Items))
	}
	stored, err := clusters.FromSecret(&secrets.Items[0])
	if err != nil {
		t.Fatal(err)
	}
	token := stored.Config.BearerToken
	if stored.Name != "target" || stored.Labels["env"] != "test" || stored.Project != "default" || token == "" || len(stored.Config.TLSClientConfig.CAData) == 0 {
		t.Errorf("stored cluster %v, project %q, labels %v", stored, stored.Project, stored.Labels)
	}

	asAdmin := func(args ...string) string {
		return mustSkiff(append([]string{"cluster", "--config", admin}, args...)...)
	}
	for _, out := range []string{asAdmin("list"), asAdmin("get", "target", "-o", "json"), asAdmin("get", second.Config.Host)} {
		if strings.Contains(out, token) {
			t.Fatalf("the output shows the token:\n%s", out)
		}
	}
	// This API server runs without the controllers: the states are Unknown.
	wantContains(t, asAdmin("list"), "SERVER ", " NAME ", " VERSION ", " STATUS ", " MESSAGE ", " PROJECT ", " APPS", "in-cluster", "target", second.Config.Host, "Unknown")
	wantContains(t, asAdmin("get", "target"), "connectionState:\n  status: Unknown", "info:\n  applicationsCount: 0\n  cacheInfo: {}\n  connectionState:")
	wantContains(t, asAdmin("get", "target", "-o", "json"), `"bearerToken": "++++++++"`, `"env": "test"`)

	if _, err := runSkiff("cluster", "--config", viewer, "rotate-auth", "target"); err == nil || !strings.Contains(err.Error(), "permission denied: clusters, update") {
		t.Errorf("rotate-auth as viewer: %v, want the server's 403", err)
	}
	wantContains(t, asAdmin("rotate-auth", "target"), "rotated auth")
	if err := c.Get(context.Background(), client.ObjectKeyFromObject(&secrets.Items[0]), &secrets.Items[0]); err != nil {
		t.Fatal(err)
	}
	if rotated, err := clusters.FromSecret(&secrets.Items[0]); err != nil || rotated.Config.BearerToken == token {
		t.Errorf("after rotate-auth the Secret holds the old token (%v)", err)
	}

	if _, err := runSkiff("cluster", "--config", viewer, "rm", "target", "--yes"); err == nil || !strings.Contains(err.Error(), "permission denied: clusters, delete") {
		t.Errorf("rm as viewer: %v, want the server's 403", err)
	}
	wantContains(t, asAdmin("rm", "target", "--yes"), "Cluster 'target' removed")
	if out := asAdmin("list", "-o", "server"); strings.Contains(out, second.Config.Host) {
		t.Errorf("the removed cluster is still listed:\n%s", out)
	}
}
