package server

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/skiffcd/skiff/api/v1alpha1"
	"github.com/skiffcd/skiff/internal/clusters"
	"github.com/skiffcd/skiff/internal/testcluster"
	"github.com/skiffcd/skiff/internal/testwait"
)

// The tree and the resources of an app deploying to a registered cluster
// are read there, not in the cluster the server runs against, where an
// object of the same name holds other data.
func TestResourcesOfAnAppInARegisteredCluster(t *testing.T) {
	east, err := testcluster.Start(context.Background(), testcluster.Options{})
	if east != nil {
		t.Cleanup(east.Stop)
	}
	if err != nil {
		t.Fatal(err)
	}
	reg := clusters.NewStatic(clusters.Cluster{Name: "east", Server: east.Config.Host, Config: clusters.Config{
		BearerToken: east.Config.BearerToken, TLSClientConfig: clusters.TLSClientConfig{CAData: east.Config.CAData},
	}})
	h := startFullServer(t, func(s *Server) { s.Clusters = reg })
	ctx := context.Background()
	eastClient := east.Client(t)
	if err := eastClient.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: h.ns}}); err != nil {
		t.Fatal(err)
	}
	for c, where := range map[client.Client]string{h.k8s: "local", eastClient: "east"} {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: h.ns, Name: "settings"}, Data: map[string]string{"cluster": where}}
		if err := c.Create(ctx, cm); err != nil {
			t.Fatal(err)
		}
	}
	h.createApp("shop", "default", nil, v1alpha1.ApplicationSource{RepoURL: "https://github.com/org/repo", Path: "shop"})
	h.updateApp("shop", func(a *v1alpha1.Application) {
		a.Spec.Destination = v1alpha1.ApplicationDestination{Name: "east", Namespace: h.ns}
	})
	h.setResources("shop", v1alpha1.ResourceStatus{Version: "v1", Kind: "ConfigMap", Namespace: h.ns, Name: "settings"})
	admin := h.login("admin", h.password)

	var res struct{ Manifest string }
	testwait.Eventually(t, "the ConfigMap of the app's cluster", func() error {
		r := h.do(http.MethodGet, "/api/v1/applications/shop/resource?namespace="+h.ns+"&version=v1&kind=ConfigMap&resourceName=settings", admin, nil)
		if r.status != http.StatusOK {
			t.Fatalf("resource: %d %s", r.status, r.body)
		}
		res.Manifest = ""
		r.json(t, &res)
		if !strings.Contains(res.Manifest, `"cluster":"east"`) {
			t.Fatalf("manifest %s, want east's ConfigMap", res.Manifest)
		}
		return nil
	}, testwait.Timeout(30*time.Second))
}
