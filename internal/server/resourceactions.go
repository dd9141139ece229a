package server

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/skiffcd/skiff/api/v1alpha1"
	"github.com/skiffcd/skiff/internal/resourceactions"
)

// EventReasonResourceActionRan is the reason of the Event an action leaves
// on its Application (Argo CD's).
const EventReasonResourceActionRan = "ResourceActionRan"

// resourceQuery names one object of an app's tree, as Argo CD's resource
// requests do.
type resourceQuery struct {
	Group        string `json:"group"`
	Version      string `json:"version"`
	Kind         string `json:"kind"`
	Namespace    string `json:"namespace"`
	ResourceName string `json:"resourceName"`
	AppNamespace string `json:"appNamespace"`
	Project      string `json:"project"`
}

func resourceQueryOf(q url.Values) resourceQuery {
	return resourceQuery{Group: q.Get("group"), Version: q.Get("version"), Kind: q.Get("kind"), Namespace: q.Get("namespace"),
		ResourceName: q.Get("resourceName"), AppNamespace: q.Get("appNamespace"), Project: q.Get("project")}
}

func (rq resourceQuery) String() string {
	return resourceactions.Describe(rq.Group, rq.Kind, rq.Namespace, rq.ResourceName)
}

// check answers 400 for a query without kind or name, and 404 for an app
// namespace or project other than the app's, as Argo CD does.
func (s *Server) checkResourceQuery(w http.ResponseWriter, rq resourceQuery, app *v1alpha1.Application) bool {
	if rq.Kind == "" || rq.ResourceName == "" {
		writeError(w, http.StatusBadRequest, "kind and resourceName are required")
		return false
	}
	if app == nil {
		return true
	}
	if (rq.AppNamespace != "" && rq.AppNamespace != s.Namespace) || (rq.Project != "" && rq.Project != app.ProjectName()) {
		writeError(w, http.StatusNotFound, fmt.Sprintf("application %s not found in namespace %q, project %q", app.Name, rq.AppNamespace, rq.Project))
		return false
	}
	return true
}

// treeObject is the live object of app's tree that rq names, read again at
// rq's version when it names another; nil when the tree has none.
func (s *Server) treeObject(ctx context.Context, app *v1alpha1.Application, rq resourceQuery) (*unstructured.Unstructured, error) {
	nodes, objects, err := s.appTree(ctx, app)
	if err != nil {
		return nil, err
	}
	for _, n := range nodes {
		if n.Group != rq.Group || n.Kind != rq.Kind || n.Namespace != rq.Namespace || n.Name != rq.ResourceName {
			continue
		}
		if obj := objects[n.UID]; obj != nil && (rq.Version == "" || rq.Version == n.Version) {
			return obj, nil
		}
		// Another version, or a node of the app's status whose object the
		// tree's reads did not find (yet): read it from the API server.
		rend, err := s.renderer(app)
		if err != nil {
			return nil, err
		}
		version := rq.Version
		if version == "" {
			version = n.Version
		}
		return rend.Live(ctx, schema.GroupVersionKind{Group: n.Group, Version: version, Kind: n.Kind}, n.Namespace, n.Name)
	}
	return nil, nil
}

// appResource reads the app of the path, checking action on it, and the
// object of its tree rq names; it answers errors itself, 404 for an object
// outside the tree.
func (s *Server) appResource(w http.ResponseWriter, r *http.Request, c *session, rq resourceQuery, action string) (*v1alpha1.Application, *unstructured.Unstructured, bool) {
	if !s.checkResourceQuery(w, rq, nil) {
		return nil, nil, false
	}
	app, ok := s.getApp(w, r, c, action)
	if !ok || !s.checkResourceQuery(w, rq, app) {
		return nil, nil, false
	}
	obj, err := s.treeObject(r.Context(), app, rq)
	if err != nil {
		s.internalError(w, err)
		return nil, nil, false
	}
	if obj == nil {
		writeError(w, http.StatusNotFound, fmt.Sprintf("%s is not a resource of application %s", rq, app.Name))
		return nil, nil, false
	}
	return app, obj, true
}

// resourceActionRBAC is the RBAC action of running action on a kind:
// action/<group>/<kind>/<action>, as Argo CD names it.
func resourceActionRBAC(group, kind, action string) string {
	return "action/" + group + "/" + kind + "/" + action
}

// handleListResourceActions lists the actions of one object of an app's
// tree (RBAC get on the app), as Argo CD's ListResourceActions.
func (s *Server) handleListResourceActions(w http.ResponseWriter, r *http.Request, c *session) {
	_, obj, ok := s.appResource(w, r, c, resourceQueryOf(r.URL.Query()), actGet)
	if !ok {
		return
	}
	actions, err := s.actionCatalog().List(obj)
	if err != nil {
		s.internalError(w, err)
		return
	}
	if actions == nil {
		actions = []resourceactions.Action{}
	}
	writeJSON(w, http.StatusOK, map[string]any{"actions": actions})
}

// handleRunResourceAction runs an action in Argo CD's first form: the
// object in the query, the action's name the JSON string of the body.
func (s *Server) handleRunResourceAction(w http.ResponseWriter, r *http.Request, c *session) {
	var action string
	if !decodeJSON(w, r, 1<<16, &action) {
		return
	}
	s.runResourceAction(w, r, c, resourceQueryOf(r.URL.Query()), action, nil)
}

// runActionV2 is the body of Argo CD's RunResourceActionV2; fields it
// leaves empty are taken from the query.
type runActionV2 struct {
	resourceQuery
	Name       string                  `json:"name"`
	Action     string                  `json:"action"`
	Parameters []resourceactions.Param `json:"resourceActionParameters"`
}

// handleRunResourceActionV2 runs an action in Argo CD's second form: the
// object, the action and its parameters in the JSON body.
func (s *Server) handleRunResourceActionV2(w http.ResponseWriter, r *http.Request, c *session) {
	var body runActionV2
	if !decodeJSON(w, r, 1<<20, &body) {
		return
	}
	if body.Name != "" && body.Name != r.PathValue("name") {
		writeError(w, http.StatusBadRequest, fmt.Sprintf("the body names application %q, the path %q", body.Name, r.PathValue("name")))
		return
	}
	rq, q := body.resourceQuery, resourceQueryOf(r.URL.Query())
	for _, f := range []struct {
		dst *string
		src string
	}{
		{&rq.Group, q.Group}, {&rq.Version, q.Version}, {&rq.Kind, q.Kind}, {&rq.Namespace, q.Namespace},
		{&rq.ResourceName, q.ResourceName}, {&rq.AppNamespace, q.AppNamespace}, {&rq.Project, q.Project},
	} {
		if *f.dst == "" {
			*f.dst = f.src
		}
	}
	s.runResourceAction(w, r, c, rq, body.Action, body.Parameters)
}

// runResourceAction checks applications, action/<group>/<kind>/<action>
// on the app, finds the object in its tree, runs the action in the app's
// destination and records an Event on the app of who ran what. It answers
// {} as Argo CD does.
func (s *Server) runResourceAction(w http.ResponseWriter, r *http.Request, c *session, rq resourceQuery, action string, params []resourceactions.Param) {
	if action == "" || strings.ContainsAny(action, "/ ") {
		writeError(w, http.StatusBadRequest, fmt.Sprintf("invalid action name %q", action))
		return
	}
	app, obj, ok := s.appResource(w, r, c, rq, resourceActionRBAC(rq.Group, rq.Kind, action))
	if !ok {
		return
	}
	rend, err := s.renderer(app)
	if err != nil {
		s.renderError(w, err)
		return
	}
	writer := resourceactions.Writer{Dynamic: rend.Dynamic, Mapper: rend.Mapper, Now: s.Now}
	if _, err := writer.Run(r.Context(), s.actionCatalog(), obj, action, params); err != nil {
		s.opError(w, err)
		return
	}
	s.recordAppEvent(r.Context(), app, EventReasonResourceActionRan,
		fmt.Sprintf("%s ran action %s on %s", c.displayName(), action, rq))
	writeJSON(w, http.StatusOK, map[string]any{})
}

// actionCatalog is the catalog of resource actions: the built-in ones and
// argocd-cm's custom ones, when configured.
func (s *Server) actionCatalog() resourceactions.Catalog {
	return resourceactions.Catalog{Custom: s.CustomActions}
}

// recordAppEvent writes a Normal Event on app, as the API server's own
// (component skiff-server). The action it records is done: a failure to
// record it is logged, not answered.
func (s *Server) recordAppEvent(ctx context.Context, app *v1alpha1.Application, reason, message string) {
	now := time.Now()
	if s.Now != nil {
		now = s.Now()
	}
	ev := &corev1.Event{
		ObjectMeta: metav1.ObjectMeta{Namespace: s.Namespace, GenerateName: app.Name + "."},
		InvolvedObject: corev1.ObjectReference{APIVersion: v1alpha1.GroupVersion.String(), Kind: "Application",
			Namespace: s.Namespace, Name: app.Name, UID: app.UID, ResourceVersion: app.ResourceVersion},
		Reason: reason, Message: message, Type: corev1.EventTypeNormal,
		Source:         corev1.EventSource{Component: "skiff-server"},
		FirstTimestamp: metav1.NewTime(now), LastTimestamp: metav1.NewTime(now), Count: 1,
	}
	if err := s.Client.Create(ctx, ev); err != nil {
		s.Log.Error("recording an application event", "application", app.Name, "reason", reason, "error", err)
	}
}
