package server

import (
	"net/http"
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// handleEvents lists the Events of an app (involvedObject the Application)
// or, with resourceName (and resourceNamespace, resourceUID), of one
// object of its tree, oldest first (RBAC get on the app). They are read
// uncached with field selectors: the server keeps no Event informer.
func (s *Server) handleEvents(w http.ResponseWriter, r *http.Request, c *session) {
	q := r.URL.Query()
	resNamespace, resName, resUID := q.Get("resourceNamespace"), q.Get("resourceName"), types.UID(q.Get("resourceUID"))
	if resName == "" && (resNamespace != "" || resUID != "") {
		writeError(w, http.StatusBadRequest, "resourceName is required with resourceNamespace or resourceUID")
		return
	}
	app, ok := s.getApp(w, r, c, actGet)
	if !ok {
		return
	}
	selector := fields.Set{
		"involvedObject.kind":      "Application",
		"involvedObject.name":      app.Name,
		"involvedObject.namespace": s.Namespace,
	}
	opts := []client.ListOption{client.InNamespace(s.Namespace)}
	if resName != "" {
		// Only objects of the app's tree: the app's get permission must
		// not reveal the Events of others.
		nodes, _, err := s.appTree(r.Context(), app)
		if err != nil {
			s.internalError(w, err)
			return
		}
		var node *resourceNode
		for i, n := range nodes {
			if n.Name == resName && n.Namespace == resNamespace && (resUID == "" || n.UID == resUID) {
				node = &nodes[i]
				break
			}
		}
		if node == nil {
			writeError(w, http.StatusNotFound, "resource "+resNamespace+"/"+resName+" is not a resource of application "+app.Name)
			return
		}
		selector = fields.Set{"involvedObject.name": node.Name, "involvedObject.uid": string(node.UID)}
		// Events of cluster-scoped objects may be in any namespace.
		opts = []client.ListOption{client.InNamespace(node.Namespace)}
	}
	var list corev1.EventList
	opts = append(opts, client.MatchingFieldsSelector{Selector: fields.SelectorFromSet(selector)})
	if err := s.APIReader.List(r.Context(), &list, opts...); err != nil {
		s.internalError(w, err)
		return
	}
	sort.SliceStable(list.Items, func(i, j int) bool {
		return eventTime(&list.Items[i]).Before(eventTime(&list.Items[j]))
	})
	if list.Items == nil {
		list.Items = []corev1.Event{}
	}
	writeJSON(w, http.StatusOK, map[string]any{"items": list.Items})
}

// eventTime is when an Event last happened, whichever API wrote it.
func eventTime(e *corev1.Event) time.Time {
	switch {
	case !e.LastTimestamp.IsZero():
		return e.LastTimestamp.Time
	case !e.EventTime.IsZero():
		return e.EventTime.Time
	case !e.FirstTimestamp.IsZero():
		return e.FirstTimestamp.Time
	}
	return e.CreationTimestamp.Time
}
