package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sort"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/skiffcd/skiff/api/v1alpha1"
	"github.com/skiffcd/skiff/internal/health"
)

// resourceRef names a node's parent (Argo CD's ResourceRef).
type resourceRef struct {
	Group     string    `json:"group"`
	Kind      string    `json:"kind"`
	Namespace string    `json:"namespace"`
	Name      string    `json:"name"`
	UID       types.UID `json:"uid"`
}

// nodeHealth is a node's health (Argo CD's HealthStatus).
type nodeHealth struct {
	Status  v1alpha1.HealthStatusCode `json:"status"`
	Message string                    `json:"message,omitempty"`
}

// infoItem is one line of a node's details in the UI.
type infoItem struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// resourceNode is one live object of an app's tree (Argo CD's ResourceNode).
type resourceNode struct {
	Group           string        `json:"group"`
	Version         string        `json:"version"`
	Kind            string        `json:"kind"`
	Namespace       string        `json:"namespace"`
	Name            string        `json:"name"`
	UID             types.UID     `json:"uid"`
	ResourceVersion string        `json:"resourceVersion"`
	ParentRefs      []resourceRef `json:"parentRefs,omitempty"`
	Health          *nodeHealth   `json:"health,omitempty"`
	Info            []infoItem    `json:"info,omitempty"`
	Images          []string      `json:"images,omitempty"`
	CreatedAt       metav1.Time   `json:"createdAt"`
}

// buildTree makes the nodes of an app's tree: every managed object (the
// live objects of status.resources) without parents, then every candidate
// an ownerReference ties to a node already in the tree, transitively. It
// reads only what it is given. Nodes are sorted by group, kind, namespace
// and name.
func buildTree(judge health.Judge, managed, candidates []*unstructured.Unstructured) []resourceNode {
	inTree := map[types.UID]*unstructured.Unstructured{}
	var nodes []resourceNode
	for _, obj := range managed {
		if _, dup := inTree[obj.GetUID()]; dup {
			continue
		}
		inTree[obj.GetUID()] = obj
		nodes = append(nodes, newNode(judge, obj, nil))
	}
	// Each pass adds the children of the previous one; the chains are short
	// (CronJob→Job→Pod), and a pass that adds nothing ends the loop.
	for added := true; added; {
		added = false
		for _, obj := range candidates {
			if _, done := inTree[obj.GetUID()]; done {
				continue
			}
			var parents []resourceRef
			for _, ref := range obj.GetOwnerReferences() {
				owner, ok := inTree[ref.UID]
				if !ok {
					continue
				}
				gv, _ := schema.ParseGroupVersion(ref.APIVersion)
				parents = append(parents, resourceRef{Group: gv.Group, Kind: ref.Kind, Namespace: owner.GetNamespace(), Name: ref.Name, UID: ref.UID})
			}
			if len(parents) == 0 {
				continue
			}
			inTree[obj.GetUID()] = obj
			nodes = append(nodes, newNode(judge, obj, parents))
			added = true
		}
	}
	sort.SliceStable(nodes, func(i, j int) bool {
		a, b := nodes[i], nodes[j]
		return a.Group+"/"+a.Kind+"/"+a.Namespace+"/"+a.Name < b.Group+"/"+b.Kind+"/"+b.Namespace+"/"+b.Name
	})
	return nodes
}

func newNode(judge health.Judge, obj *unstructured.Unstructured, parents []resourceRef) resourceNode {
	gvk := obj.GroupVersionKind()
	n := resourceNode{Group: gvk.Group, Version: gvk.Version, Kind: gvk.Kind, Namespace: obj.GetNamespace(), Name: obj.GetName(),
		UID: obj.GetUID(), ResourceVersion: obj.GetResourceVersion(), ParentRefs: parents, CreatedAt: obj.GetCreationTimestamp(),
		Images: images(obj)}
	// Objects without status (ConfigMaps, Roles) have no health to show,
	// as in Argo CD.
	if _, ok := obj.Object["status"]; ok || gvk.Kind == "Pod" {
		res := judge.Assess(obj)
		n.Health = &nodeHealth{Status: res.Status, Message: res.Message}
	}
	if gvk.Group == "" && gvk.Kind == "Pod" {
		n.Info = podInfo(obj)
	}
	return n
}

// podSpecPath says where a kind keeps the pod spec whose images a node shows.
var podSpecPath = map[string][]string{
	"Pod":         {"spec"},
	"Deployment":  {"spec", "template", "spec"},
	"ReplicaSet":  {"spec", "template", "spec"},
	"StatefulSet": {"spec", "template", "spec"},
	"DaemonSet":   {"spec", "template", "spec"},
	"Job":         {"spec", "template", "spec"},
	"Rollout":     {"spec", "template", "spec"},
	"CronJob":     {"spec", "jobTemplate", "spec", "template", "spec"},
}

// images lists the distinct container images of a pod or pod template.
func images(obj *unstructured.Unstructured) []string {
	path, ok := podSpecPath[obj.GetKind()]
	if !ok {
		return nil
	}
	var out []string
	for _, field := range []string{"initContainers", "containers"} {
		containers, _, _ := unstructured.NestedSlice(obj.Object, append(append([]string(nil), path...), field)...)
		for _, c := range containers {
			m, _ := c.(map[string]any)
			if img, _ := m["image"].(string); img != "" && !slices.Contains(out, img) {
				out = append(out, img)
			}
		}
	}
	return out
}

// podInfo is what `kubectl get pods` shows of a pod: its status (the
// reason of a waiting or terminated container before the phase) and its
// ready containers.
func podInfo(obj *unstructured.Unstructured) []infoItem {
	var pod corev1.Pod
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, &pod); err != nil {
		return nil
	}
	status := string(pod.Status.Phase)
	if pod.Status.Reason != "" {
		status = pod.Status.Reason
	}
	ready := 0
	for _, cs := range pod.Status.ContainerStatuses {
		switch {
		case cs.State.Waiting != nil && cs.State.Waiting.Reason != "":
			status = cs.State.Waiting.Reason
		case cs.State.Terminated != nil && cs.State.Terminated.Reason != "":
			status = cs.State.Terminated.Reason
		case cs.State.Terminated != nil:
			status = fmt.Sprintf("ExitCode:%d", cs.State.Terminated.ExitCode)
		case cs.Ready:
			ready++
		}
	}
	if pod.DeletionTimestamp != nil {
		status = "Terminating"
	}
	if status == "" {
		status = "Unknown"
	}
	return []infoItem{
		{Name: "Status", Value: status},
		{Name: "Containers", Value: fmt.Sprintf("%d/%d", ready, len(pod.Spec.Containers))},
	}
}

// errNoLiveReader answers the endpoints that read live objects of any kind
// when the server was built without a dynamic client.
var errNoLiveReader = fmt.Errorf("%w: reading live resources is not configured", errNotReady)

// childLists says which kinds of children an owner kind has.
var childLists = map[string][]string{
	"Deployment":  {"ReplicaSet", "Pod"},
	"Rollout":     {"ReplicaSet", "Pod"},
	"ReplicaSet":  {"Pod"},
	"StatefulSet": {"Pod"},
	"DaemonSet":   {"Pod"},
	"Job":         {"Pod"},
	"CronJob":     {"Job", "Pod"},
}

// appTree reads the live objects of app's tree and returns its nodes and
// the objects by UID. Children are listed uncached (the server keeps no
// pod informer), only in the namespaces of the app's workloads and only
// of the kinds those workloads own.
func (s *Server) appTree(ctx context.Context, app *v1alpha1.Application) ([]resourceNode, map[types.UID]*unstructured.Unstructured, error) {
	r, err := s.renderer(app)
	if err != nil {
		return nil, nil, err
	}
	var managed []*unstructured.Unstructured
	lists := map[string]map[string]bool{} // namespace → child kinds
	for _, rs := range app.Status.Resources {
		gvk := schema.GroupVersionKind{Group: rs.Group, Version: rs.Version, Kind: rs.Kind}
		obj, err := r.Live(ctx, gvk, rs.Namespace, rs.Name)
		if apierrors.IsForbidden(err) {
			continue // a kind Skiff may not read must not hide the rest of the tree
		}
		if err != nil {
			return nil, nil, err
		}
		if obj == nil {
			continue
		}
		managed = append(managed, obj)
		if kinds := childLists[rs.Kind]; len(kinds) > 0 && obj.GetNamespace() != "" {
			if lists[obj.GetNamespace()] == nil {
				lists[obj.GetNamespace()] = map[string]bool{}
			}
			for _, k := range kinds {
				lists[obj.GetNamespace()][k] = true
			}
		}
	}
	var candidates []*unstructured.Unstructured
	for ns, kinds := range lists {
		for kind := range kinds {
			objs, err := s.listChildren(ctx, ns, kind)
			if err != nil {
				return nil, nil, err
			}
			candidates = append(candidates, objs...)
		}
	}
	nodes := buildTree(s.Health, managed, candidates)
	all := make(map[types.UID]*unstructured.Unstructured, len(managed)+len(candidates))
	for _, obj := range append(managed, candidates...) {
		all[obj.GetUID()] = obj
	}
	objects := make(map[types.UID]*unstructured.Unstructured, len(nodes))
	for _, n := range nodes {
		objects[n.UID] = all[n.UID]
	}
	return nodes, objects, nil
}

// listChildren lists the objects of one child kind in ns as unstructured
// objects with their kind set.
func (s *Server) listChildren(ctx context.Context, ns, kind string) ([]*unstructured.Unstructured, error) {
	var (
		list client.ObjectList
		gvk  schema.GroupVersionKind
	)
	switch kind {
	case "ReplicaSet":
		list, gvk = &appsv1.ReplicaSetList{}, appsv1.SchemeGroupVersion.WithKind(kind)
	case "Pod":
		list, gvk = &corev1.PodList{}, corev1.SchemeGroupVersion.WithKind(kind)
	case "Job":
		list, gvk = &batchv1.JobList{}, batchv1.SchemeGroupVersion.WithKind(kind)
	default:
		return nil, errors.New("no child list for kind " + kind)
	}
	if err := s.APIReader.List(ctx, list, client.InNamespace(ns)); err != nil {
		return nil, fmt.Errorf("listing %ss in %s: %w", strings.ToLower(kind), ns, err)
	}
	items, err := meta.ExtractList(list)
	if err != nil {
		return nil, err
	}
	out := make([]*unstructured.Unstructured, 0, len(items))
	for _, item := range items {
		m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(item)
		if err != nil {
			return nil, fmt.Errorf("converting a %s: %w", kind, err)
		}
		u := &unstructured.Unstructured{Object: m}
		u.SetGroupVersionKind(gvk)
		out = append(out, u)
	}
	return out, nil
}

// handleResourceTree returns the live objects of an app: its managed
// resources and what they own (RBAC get on the app).
func (s *Server) handleResourceTree(w http.ResponseWriter, r *http.Request, c *session) {
	app, ok := s.getApp(w, r, c, actGet)
	if !ok {
		return
	}
	nodes, _, err := s.appTree(r.Context(), app)
	if err != nil {
		s.internalError(w, err)
		return
	}
	if nodes == nil {
		nodes = []resourceNode{}
	}
	writeJSON(w, http.StatusOK, map[string]any{"nodes": nodes})
}
