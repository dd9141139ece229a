package server

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/skiffcd/skiff/api/v1alpha1"
	"github.com/skiffcd/skiff/internal/clusterops"
	"github.com/skiffcd/skiff/internal/clusters"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestClustersAPI(t *testing.T) {
	h := startServer(t)
	h.addUser("alice", "alice-password")
	h.setRBAC(map[string]string{"policy.csv": "g, alice, role:readonly\n" +
		"p, alice, clusters, create, https://dev.example.com*, allow\n"})
	alice := h.login("alice", "alice-password")
	admin := h.login("admin", h.password)
	const clusters = "/api/v1/clusters"
	prodPath := clusters + "/" + url.PathEscape("https://prod.example.com:6443")
	prod := map[string]any{"name": "prod", "server": "https://prod.example.com:6443", "namespaces": []string{"web"},
		"labels": map[string]string{"env": "prod"}, "config": map[string]any{"bearerToken": "tok-s3cret"}}

	wantError(t, h.do(http.MethodGet, clusters, "", nil), http.StatusUnauthorized)
	wantError(t, h.do(http.MethodPost, clusters, alice, prod), http.StatusForbidden)
	r := h.do(http.MethodPost, clusters, admin, prod)
	if r.status != http.StatusOK {
		t.Fatalf("admin adds prod: %d %s", r.status, r.body)
	}
	wantError(t, h.do(http.MethodPost, clusters, admin, prod), http.StatusConflict)
	if r := h.do(http.MethodPost, clusters+"?upsert=true", admin, prod); r.status != http.StatusOK {
		t.Errorf("upsert: %d %s", r.status, r.body)
	}
	wantError(t, h.do(http.MethodPost, clusters, admin, map[string]any{"server": "not a url"}), http.StatusBadRequest)
	if r := h.do(http.MethodPost, clusters, alice, map[string]any{"name": "dev", "server": "https://dev.example.com"}); r.status != http.StatusOK {
		t.Errorf("alice adds a cluster her policy allows: %d %s", r.status, r.body)
	}

	// Every answer, to every caller, keeps the token out.
	var list clusterops.List
	for _, token := range []string{alice, admin} {
		for _, path := range []string{clusters, prodPath, clusters + "/prod"} {
			r := h.do(http.MethodGet, path, token, nil)
			if r.status != http.StatusOK {
				t.Fatalf("GET %s: %d %s", path, r.status, r.body)
			}
			if strings.Contains(string(r.body), "s3cret") {
				t.Errorf("GET %s shows the token: %s", path, r.body)
			}
		}
	}
	h.do(http.MethodGet, clusters, alice, nil).json(t, &list)
	var names []string
	for _, c := range list.Items {
		names = append(names, c.Name+"/"+c.ConnectionState.Status)
	}
	if strings.Join(names, ",") != "dev/Unknown,in-cluster/Unknown,prod/Unknown" {
		t.Errorf("alice lists %v", names)
	}

	wantError(t, h.do(http.MethodPut, prodPath, alice, prod), http.StatusForbidden)
	prod["project"] = "team-a"
	if r := h.do(http.MethodPut, prodPath, admin, prod); r.status != http.StatusOK || !strings.Contains(string(r.body), `"project":"team-a"`) {
		t.Errorf("admin updates prod: %d %s", r.status, r.body)
	}

	h.createApp("web", "default", nil, v1alpha1.ApplicationSource{RepoURL: "https://github.com/org/repo", Path: "web"})
	app := h.getApp("web")
	app.Spec.Destination = v1alpha1.ApplicationDestination{Name: "prod", Namespace: "web"}
	if err := h.k8s.Update(t.Context(), app); err != nil {
		t.Fatal(err)
	}
	wantError(t, h.do(http.MethodDelete, prodPath, alice, nil), http.StatusForbidden)
	wantError(t, h.do(http.MethodDelete, prodPath, admin, nil), http.StatusConflict)
	if r := h.do(http.MethodDelete, prodPath+"?force=true", admin, nil); r.status != http.StatusOK {
		t.Fatalf("forced delete: %d %s", r.status, r.body)
	}
	wantError(t, h.do(http.MethodGet, prodPath, admin, nil), http.StatusNotFound)
}

// fixedStates are the states a controller reports.
type fixedStates []clusters.State

func (f fixedStates) ClusterStates(context.Context) ([]clusters.State, error) { return f, nil }

// The clusters' states, as the controller reports them through
// Server.ClusterStates, show in the list and in each cluster under Argo
// CD's names (connectionState, serverVersion, info with cacheInfo and
// applicationsCount); a cluster the controller does not follow is
// Unknown and not monitored.
func TestClustersAPIShowsConnectionStates(t *testing.T) {
	synced := metav1.NewTime(time.Date(2026, 5, 4, 3, 2, 1, 0, time.UTC))
	const prodServer = "https://prod.example.com:6443"
	h := startServerWith(t, Options{}, func(s *Server) {
		s.ClusterStates = fixedStates{{Server: prodServer, Info: clusters.Info{
			ConnectionState:   clusters.ConnectionState{Status: clusters.ConnectionFailed, Message: "dial tcp: connection refused", AttemptedAt: &synced},
			ServerVersion:     "1.35",
			CacheInfo:         clusters.CacheInfo{ResourcesCount: 40, APIsCount: 12, LastCacheSyncTime: &synced},
			ApplicationsCount: 2,
		}}}
	})
	admin := h.login("admin", h.password)
	prod := map[string]any{"name": "prod", "server": prodServer, "config": map[string]any{"bearerToken": "tok-s3cret"}}
	if r := h.do(http.MethodPost, "/api/v1/clusters", admin, prod); r.status != http.StatusOK {
		t.Fatalf("adding prod: %d %s", r.status, r.body)
	}

	wantProd := `"connectionState":{"status":"Failed","message":"dial tcp: connection refused","attemptedAt":"2026-05-04T03:02:01Z"}`
	wantInfo := `"info":{"connectionState":{"status":"Failed","message":"dial tcp: connection refused","attemptedAt":"2026-05-04T03:02:01Z"},` +
		`"serverVersion":"1.35","cacheInfo":{"resourcesCount":40,"apisCount":12,"lastCacheSyncTime":"2026-05-04T03:02:01Z"},"applicationsCount":2}`
	for _, path := range []string{"/api/v1/clusters", "/api/v1/clusters/" + url.PathEscape(prodServer), "/api/v1/clusters/prod"} {
		r := h.do(http.MethodGet, path, admin, nil)
		if r.status != http.StatusOK {
			t.Fatalf("GET %s: %d %s", path, r.status, r.body)
		}
		for _, want := range []string{wantProd, `"serverVersion":"1.35"`, wantInfo} {
			if !strings.Contains(string(r.body), want) {
				t.Errorf("GET %s: no %s in\n%s", path, want, r.body)
			}
		}
	}
	var inCluster clusterops.Cluster
	h.do(http.MethodGet, "/api/v1/clusters/in-cluster", admin, nil).json(t, &inCluster)
	if s := inCluster.ConnectionState; s.Status != clusters.ConnectionUnknown || s.Message != clusters.NotMonitored || inCluster.Info.ConnectionState != s {
		t.Errorf("in-cluster, which the controller does not report: %+v, info %+v", s, inCluster.Info)
	}
}
