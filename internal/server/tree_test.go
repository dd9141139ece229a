package server

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/controller-runtime/pkg/cache"

	"github.com/skiffcd/skiff/api/v1alpha1"
	"github.com/skiffcd/skiff/internal/health"
	"github.com/skiffcd/skiff/internal/mask"
	"github.com/skiffcd/skiff/internal/reposerver"
	"github.com/skiffcd/skiff/internal/testcluster"
	"github.com/skiffcd/skiff/internal/testwait"
)

// startFullServer is startServer with everything the resource endpoints and
// the streams need: a dynamic client, a repo server and a started cache.
// configure may set more of the Server.
func startFullServer(t *testing.T, configure ...func(*Server)) *harness {
	t.Helper()
	return startServerWith(t, Options{}, append([]func(*Server){func(s *Server) {
		dyn, err := dynamic.NewForConfig(cluster.Config)
		if err != nil {
			t.Fatal(err)
		}
		s.Dynamic, s.Mapper = dyn, s.Client.RESTMapper()
		if s.Repo, err = reposerver.NewInDir(t.TempDir(), reposerver.Options{}); err != nil {
			t.Fatal(err)
		}
		s.Informers = startCache(t, cache.Options{Scheme: s.Client.Scheme(), Mapper: s.Client.RESTMapper()})
	}}, configure...)...)
}

// liveObject is a live object for the tree tests; owners get ownerReferences.
func liveObject(apiVersion, kind, name string, status map[string]any, owners ...*unstructured.Unstructured) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": apiVersion, "kind": kind}}
	u.SetNamespace("shop")
	u.SetName(name)
	u.SetUID(types.UID(strings.ToLower(kind) + "-" + name))
	if status != nil {
		u.Object["status"] = status
	}
	var refs []metav1.OwnerReference
	for _, o := range owners {
		refs = append(refs, metav1.OwnerReference{APIVersion: o.GetAPIVersion(), Kind: o.GetKind(), Name: o.GetName(), UID: o.GetUID()})
	}
	u.SetOwnerReferences(refs)
	return u
}

func withContainers(u *unstructured.Unstructured, path []string, images ...string) *unstructured.Unstructured {
	var cs []any
	for i, img := range images {
		cs = append(cs, map[string]any{"name": fmt.Sprintf("c%d", i), "image": img})
	}
	_ = unstructured.SetNestedSlice(u.Object, cs, append(path, "containers")...)
	return u
}

// describeTree renders nodes as "Kind/name<-ParentKind/parent" lines.
func describeTree(nodes []resourceNode) []string {
	var out []string
	for _, n := range nodes {
		line := n.Kind + "/" + n.Name
		for _, p := range n.ParentRefs {
			line += "<-" + p.Kind + "/" + p.Name
		}
		out = append(out, line)
	}
	return out
}

func TestBuildTree(t *testing.T) {
	deploy := withContainers(liveObject("apps/v1", "Deployment", "web", map[string]any{}), []string{"spec", "template", "spec"}, "nginx:1")
	rs := liveObject("apps/v1", "ReplicaSet", "web-1", map[string]any{}, deploy)
	runningPod := map[string]any{"phase": "Running", "conditions": []any{map[string]any{"type": "Ready", "status": "True"}}, "containerStatuses": []any{
		map[string]any{"name": "c0", "ready": true, "state": map[string]any{"running": map[string]any{}}}}}
	pod := withContainers(liveObject("v1", "Pod", "web-1-a", runningPod, rs), []string{"spec"}, "nginx:1")
	crashing := map[string]any{"phase": "Running", "containerStatuses": []any{
		map[string]any{"name": "c0", "ready": false, "state": map[string]any{"waiting": map[string]any{"reason": "CrashLoopBackOff"}}}}}
	cron := liveObject("batch/v1", "CronJob", "backup", map[string]any{})
	job := liveObject("batch/v1", "Job", "backup-1", map[string]any{}, cron)
	jobPod := withContainers(liveObject("v1", "Pod", "backup-1-x", crashing, job), []string{"spec"}, "busybox")
	foreignRS := liveObject("apps/v1", "ReplicaSet", "other-1", map[string]any{}, liveObject("apps/v1", "Deployment", "other", nil))
	foreignPod := liveObject("v1", "Pod", "other-1-a", runningPod, foreignRS)
	cm := liveObject("v1", "ConfigMap", "settings", nil)

	tests := map[string]struct {
		managed, candidates []*unstructured.Unstructured
		want                []string
		// wantHealth is each node's health status, "" when omitted.
		wantHealth map[string]string
		// wantInfo is a pod's info as "Status Containers".
		wantInfo map[string]string
		// wantImages lists a node's images.
		wantImages map[string]string
	}{
		"a Deployment's ReplicaSet and its pods hang below it": {
			managed:    []*unstructured.Unstructured{deploy},
			candidates: []*unstructured.Unstructured{pod, rs}, // children before parents: order must not matter
			want:       []string{"Pod/web-1-a<-ReplicaSet/web-1", "Deployment/web", "ReplicaSet/web-1<-Deployment/web"},
			wantInfo:   map[string]string{"web-1-a": "Running 1/1"},
			wantImages: map[string]string{"web": "nginx:1", "web-1-a": "nginx:1"},
		},
		"objects that something outside the app owns are left out": {
			managed:    []*unstructured.Unstructured{deploy},
			candidates: []*unstructured.Unstructured{foreignRS, foreignPod, rs},
			want:       []string{"Deployment/web", "ReplicaSet/web-1<-Deployment/web"},
		},
		"a CronJob's Jobs and their pods form three levels, a crash shows as the pod's status": {
			managed:    []*unstructured.Unstructured{cron},
			candidates: []*unstructured.Unstructured{jobPod, job},
			want:       []string{"Pod/backup-1-x<-Job/backup-1", "CronJob/backup", "Job/backup-1<-CronJob/backup"},
			wantInfo:   map[string]string{"backup-1-x": "CrashLoopBackOff 0/1"},
			wantHealth: map[string]string{"backup-1-x": "Degraded"},
		},
		"a managed object that is also a candidate appears once, without parents": {
			managed:    []*unstructured.Unstructured{cron, job},
			candidates: []*unstructured.Unstructured{job},
			want:       []string{"CronJob/backup", "Job/backup-1"},
		},
		"objects without status have no health, running pods are healthy": {
			managed:    []*unstructured.Unstructured{cm, pod},
			want:       []string{"ConfigMap/settings", "Pod/web-1-a"},
			wantHealth: map[string]string{"settings": "", "web-1-a": "Healthy"},
		},
		"an app without live objects has no nodes": {
			candidates: []*unstructured.Unstructured{pod, rs},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			nodes := buildTree(health.Judge{}, tc.managed, tc.candidates)
			if got := strings.Join(describeTree(nodes), "\n"); got != strings.Join(tc.want, "\n") {
				t.Errorf("tree:\n%s\nwant:\n%s", got, strings.Join(tc.want, "\n"))
			}
			for _, n := range nodes {
				if want, ok := tc.wantHealth[n.Name]; ok {
					got := ""
					if n.Health != nil {
						got = string(n.Health.Status)
					}
					if got != want {
						t.Errorf("%s health %q, want %q", n.Name, got, want)
					}
				}
				if want, ok := tc.wantInfo[n.Name]; ok {
					var vals []string
					for _, i := range n.Info {
						vals = append(vals, i.Value)
					}
					if got := strings.Join(vals, " "); got != want {
						t.Errorf("%s info %v, want %q", n.Name, n.Info, want)
					}
				}
				if want, ok := tc.wantImages[n.Name]; ok && strings.Join(n.Images, ",") != want {
					t.Errorf("%s images %v, want %s", n.Name, n.Images, want)
				}
			}
		})
	}
}

// setResources writes the status.resources the controller would.
func (h *harness) setResources(app string, resources ...v1alpha1.ResourceStatus) {
	h.t.Helper()
	h.updateApp(app, func(a *v1alpha1.Application) { a.Status.Resources = resources })
}

// The resource tree of a real Deployment: the kube-controller-manager makes
// its ReplicaSet and pod, which the tree finds by their owners; a managed
// resource that does not exist is left out; a user without get is refused.
// The resource endpoint then returns the pod and the masked Secret of the
// tree and refuses objects outside it.
func TestResourceTreeAndResource(t *testing.T) {
	h := startFullServer(t)
	h.addUser("alice", "alice-password")
	h.setRBAC(map[string]string{"policy.csv": "p, alice, applications, get, default/other, allow\n"})
	ctx := context.Background()
	deploy := &appsv1.Deployment{}
	testcluster.ReadYAML(t, "testdata/tree-deployment.yaml", deploy, h.ns)
	secret := &corev1.Secret{}
	testcluster.ReadYAML(t, "testdata/tree-secret.yaml", secret, h.ns)
	if err := h.k8s.Create(ctx, deploy); err != nil {
		t.Fatal(err)
	}
	if err := h.k8s.Create(ctx, secret); err != nil {
		t.Fatal(err)
	}
	outside := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: h.ns, Name: "outside"}, StringData: map[string]string{"k": "v"}}
	if err := h.k8s.Create(ctx, outside); err != nil {
		t.Fatal(err)
	}
	h.createApp("shop", "default", nil, v1alpha1.ApplicationSource{RepoURL: "https://github.com/org/repo", Path: "shop"})
	h.setResources("shop",
		v1alpha1.ResourceStatus{Group: "apps", Version: "v1", Kind: "Deployment", Namespace: h.ns, Name: "web"},
		v1alpha1.ResourceStatus{Version: "v1", Kind: "Secret", Namespace: h.ns, Name: "web-credentials"},
		v1alpha1.ResourceStatus{Version: "v1", Kind: "ConfigMap", Namespace: h.ns, Name: "not-created-yet"})
	admin, alice := h.login("admin", h.password), h.login("alice", "alice-password")

	var tree struct{ Nodes []resourceNode }
	testwait.Eventually(t, "the tree of Deployment, ReplicaSet, Pod and Secret", func() error {
		r := h.do(http.MethodGet, "/api/v1/applications/shop/resource-tree", admin, nil)
		if r.status != http.StatusOK {
			t.Fatalf("resource-tree: %d %s", r.status, r.body)
		}
		tree.Nodes = nil
		r.json(t, &tree)
		if len(tree.Nodes) != 4 {
			return fmt.Errorf("tree %v", describeTree(tree.Nodes))
		}
		return nil
	}, testwait.Timeout(60*time.Second), testwait.Interval(200*time.Millisecond))
	kinds := map[string]resourceNode{}
	for _, n := range tree.Nodes {
		kinds[n.Kind] = n
	}
	rs, pod := kinds["ReplicaSet"], kinds["Pod"]
	if len(rs.ParentRefs) != 1 || rs.ParentRefs[0].Kind != "Deployment" || rs.ParentRefs[0].Group != "apps" || rs.ParentRefs[0].Name != "web" {
		t.Errorf("ReplicaSet parents %+v, want the Deployment web", rs.ParentRefs)
	}
	if len(pod.ParentRefs) != 1 || pod.ParentRefs[0].UID != rs.UID || len(pod.Info) != 2 || pod.Health == nil {
		t.Errorf("pod %+v, want a child of %s with info and health", pod, rs.UID)
	}
	if n := kinds["Deployment"]; n.Health == nil || len(n.ParentRefs) != 0 || n.Images[0] != "nginx:1.27" || n.Version != "v1" {
		t.Errorf("Deployment node %+v, want health, no parents, its image", n)
	}
	if n := kinds["Secret"]; n.Health != nil {
		t.Errorf("Secret node has health %+v, want none", n.Health)
	}
	wantError(t, h.do(http.MethodGet, "/api/v1/applications/shop/resource-tree", alice, nil), http.StatusForbidden)
	wantError(t, h.do(http.MethodGet, "/api/v1/applications/missing/resource-tree", admin, nil), http.StatusNotFound)

	base := "/api/v1/applications/shop/resource?namespace=" + h.ns
	r := h.do(http.MethodGet, base+"&version=v1&kind=Pod&resourceName="+pod.Name, admin, nil)
	var res struct{ Manifest string }
	r.json(t, &res)
	if r.status != http.StatusOK || !strings.Contains(res.Manifest, `"name":"`+pod.Name+`"`) {
		t.Fatalf("pod manifest: %d %s", r.status, r.body)
	}
	r = h.do(http.MethodGet, base+"&kind=Secret&resourceName=web-credentials", admin, nil)
	res.Manifest = ""
	r.json(t, &res)
	if r.status != http.StatusOK || strings.Contains(res.Manifest, "aHVudGVyMg") || !strings.Contains(res.Manifest, mask.Placeholder) {
		t.Fatalf("secret manifest not masked: %d %s", r.status, r.body)
	}
	wantError(t, h.do(http.MethodGet, base+"&kind=Secret&resourceName=outside", admin, nil), http.StatusNotFound)
	wantError(t, h.do(http.MethodGet, base+"&kind=ConfigMap&resourceName=not-created-yet", admin, nil), http.StatusNotFound)
	wantError(t, h.do(http.MethodGet, base+"&kind=Secret", admin, nil), http.StatusBadRequest)
	wantError(t, h.do(http.MethodGet, base+"&kind=Pod&resourceName="+pod.Name, alice, nil), http.StatusForbidden)
}
