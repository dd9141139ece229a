package browser

import (
	"context"
	"testing"
	"time"

	"github.com/skiffcd/skiff/internal/clusters"
)

// The clusters page lists the cluster Skiff runs in as the controller sees
// it (Successful, its version) and a registered cluster no app uses as
// Unknown, not monitored.
func TestClustersPage(t *testing.T) {
	ctx := context.Background()
	idle, err := clusters.Cluster{Name: "idle", Server: "https://idle.example.invalid", Config: clusters.Config{BearerToken: "idle-token"}}.ToSecret(argocd)
	if err != nil {
		t.Fatal(err)
	}
	if err := env.k8s.Create(ctx, idle); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.k8s.Delete(context.Background(), idle) })

	p := newPage(t, 1400, 900)
	p.login("admin", env.password)
	p.click(tid("nav-clusters"))
	local, other := tid("cluster-row-in-cluster"), tid("cluster-row-idle")
	p.until("in-cluster Successful", attrIs(local+" "+tid("cluster-status"), "data-status", "Successful"), 30*time.Second)
	p.until("idle Unknown", attrIs(other+" "+tid("cluster-status"), "data-status", "Unknown"), 30*time.Second)
	if v := p.text(local + " " + tid("cluster-version")); v == "" {
		t.Error("in-cluster shows no version")
	}
	if msg := p.text(other + " " + tid("cluster-message")); msg != clusters.NotMonitored {
		t.Errorf("idle's message %q, want %q", msg, clusters.NotMonitored)
	}
	p.screenshot("01-clusters")
	if p.text(tid("cluster-list")) == "" || p.exists(tid("clusters-error")) {
		t.Error("the clusters page shows no list")
	}
}
