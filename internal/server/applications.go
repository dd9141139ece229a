package server

import (
	"net/http"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/skiffcd/skiff/api/v1alpha1"
	"github.com/skiffcd/skiff/internal/appops"
)

// appObject is the RBAC object of an application: <project>/<name>.
func appObject(app *v1alpha1.Application) string {
	return app.ProjectName() + "/" + app.Name
}

// queryList reads a repeated or comma-separated query parameter.
func queryList(r *http.Request, key string) []string {
	var out []string
	for _, v := range r.URL.Query()[key] {
		for _, part := range strings.Split(v, ",") {
			if part = strings.TrimSpace(part); part != "" {
				out = append(out, part)
			}
		}
	}
	return out
}

// handleListApplications lists the apps the caller may get, filtered by
// projects and a label selector as `argocd app list` filters them.
func (s *Server) handleListApplications(w http.ResponseWriter, r *http.Request, c *session) {
	selector := labels.Everything()
	if raw := r.URL.Query().Get("selector"); raw != "" {
		var err error
		if selector, err = labels.Parse(raw); err != nil {
			writeError(w, http.StatusBadRequest, "invalid selector: "+err.Error())
			return
		}
	}
	projects := map[string]bool{}
	for _, p := range append(queryList(r, "projects"), queryList(r, "project")...) { // "project" is the older name
		projects[p] = true
	}
	var list v1alpha1.ApplicationList
	if err := s.Client.List(r.Context(), &list, client.InNamespace(s.Namespace), client.MatchingLabelsSelector{Selector: selector}); err != nil {
		s.internalError(w, err)
		return
	}
	p, err := s.policy(r.Context())
	if err != nil {
		s.internalError(w, err)
		return
	}
	items := make([]v1alpha1.Application, 0, len(list.Items))
	for i := range list.Items {
		app := &list.Items[i]
		if len(projects) > 0 && !projects[app.ProjectName()] {
			continue
		}
		if !p.permits(c, resApplications, actGet, appObject(app)) {
			continue
		}
		items = append(items, *app)
	}
	list.Items, list.ListMeta = items, metav1.ListMeta{}
	list.APIVersion, list.Kind = v1alpha1.GroupVersion.String(), "ApplicationList"
	writeJSON(w, http.StatusOK, &list)
}

// getApp reads the named app and checks action on it; it answers errors itself.
func (s *Server) getApp(w http.ResponseWriter, r *http.Request, c *session, action string) (*v1alpha1.Application, bool) {
	name := r.PathValue("name")
	if name == "" || len(name) > 253 || strings.ContainsAny(name, "/ ") {
		writeError(w, http.StatusBadRequest, "invalid application name")
		return nil, false
	}
	app, err := appops.Get(r.Context(), s.Client, types.NamespacedName{Namespace: s.Namespace, Name: name})
	if err != nil {
		s.opError(w, err)
		return nil, false
	}
	if !s.authorize(w, r, c, resApplications, action, appObject(app)) {
		return nil, false
	}
	app.APIVersion, app.Kind = v1alpha1.GroupVersion.String(), "Application"
	return app, true
}

// handleGetApplication returns one app; ?refresh=normal|hard first sets the
// refresh annotation, as `argocd app get --refresh` does.
func (s *Server) handleGetApplication(w http.ResponseWriter, r *http.Request, c *session) {
	refresh := r.URL.Query().Get("refresh")
	if refresh != "" {
		if err := appops.CheckRefresh(refresh); err != nil {
			s.opError(w, err)
			return
		}
	}
	app, ok := s.getApp(w, r, c, actGet)
	if !ok {
		return
	}
	if refresh != "" {
		if err := appops.Refresh(r.Context(), s.Client, app, refresh); err != nil {
			s.opError(w, err)
			return
		}
	}
	writeJSON(w, http.StatusOK, app)
}

// syncRequest is the body of POST /api/v1/applications/{name}/sync (the
// fields of Argo CD's ApplicationSyncRequest this slice supports).
type syncRequest struct {
	Revision  string                           `json:"revision"`
	Prune     bool                             `json:"prune"`
	DryRun    bool                             `json:"dryRun"`
	Resources []v1alpha1.SyncOperationResource `json:"resources"`
}

// handleSync requests a sync by setting operation.sync, as Argo CD's API
// does; the Application controller runs it.
func (s *Server) handleSync(w http.ResponseWriter, r *http.Request, c *session) {
	var req syncRequest
	if r.ContentLength != 0 {
		if !decodeJSON(w, r, 1<<20, &req) {
			return
		}
	}
	op := &v1alpha1.SyncOperation{Revision: req.Revision, Prune: req.Prune, DryRun: req.DryRun, Resources: req.Resources}
	if err := appops.CheckSync(op); err != nil {
		s.opError(w, err)
		return
	}
	app, ok := s.getApp(w, r, c, actSync)
	if !ok {
		return
	}
	s.startOperation(w, r, c, app, op)
}

// startOperation sets op as app's operation in the caller's name: 409
// while another operation is set, or when the app changed since it was
// read.
func (s *Server) startOperation(w http.ResponseWriter, r *http.Request, c *session, app *v1alpha1.Application, op *v1alpha1.SyncOperation) {
	if err := appops.RequestSync(r.Context(), s.Client, app, op, v1alpha1.OperationInitiator{Username: c.displayName()}); err != nil {
		s.opError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, app)
}

// rollbackRequest is the body of a rollback: a history ID (default: the
// entry before the current one) and whether to prune.
type rollbackRequest struct {
	ID    *int64 `json:"id"`
	Prune bool   `json:"prune"`
}

// handleRollback syncs an app to a revision of its history, as
// `argocd app rollback` does (RBAC action sync; refused while automated
// sync is on, which would undo it).
func (s *Server) handleRollback(w http.ResponseWriter, r *http.Request, c *session) {
	var req rollbackRequest
	if r.ContentLength != 0 && !decodeJSON(w, r, 1<<20, &req) {
		return
	}
	app, ok := s.getApp(w, r, c, actSync)
	if !ok {
		return
	}
	id := int64(-1)
	if req.ID != nil {
		id = *req.ID
	}
	op, err := appops.RollbackOperation(app, id, req.Prune)
	if err != nil {
		s.opError(w, err)
		return
	}
	s.startOperation(w, r, c, app, op)
}

// handleTerminate stops an app's running operation (RBAC action sync).
func (s *Server) handleTerminate(w http.ResponseWriter, r *http.Request, c *session) {
	app, ok := s.getApp(w, r, c, actSync)
	if !ok {
		return
	}
	if err := appops.Terminate(r.Context(), s.Client, client.ObjectKeyFromObject(app)); err != nil {
		s.opError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{})
}

// handleDeleteApplication deletes an app; ?cascade=false (default true)
// keeps its resources, propagationPolicy=foreground|background says how
// they go, as `argocd app delete` does (RBAC action delete).
func (s *Server) handleDeleteApplication(w http.ResponseWriter, r *http.Request, c *session) {
	cascade := r.URL.Query().Get("cascade") != "false"
	propagation := r.URL.Query().Get("propagationPolicy")
	if _, err := appops.SetFinalizers(nil, cascade, propagation); err != nil {
		s.opError(w, err)
		return
	}
	app, ok := s.getApp(w, r, c, actDelete)
	if !ok {
		return
	}
	if err := appops.Delete(r.Context(), s.Client, app, cascade, propagation); err != nil {
		s.opError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{})
}

// opError answers an error of an operation on apps by its kind: 404, 400
// or 409 with its message, which speaks in the API's terms; any other
// error is ours (500).
func (s *Server) opError(w http.ResponseWriter, err error) {
	if code := opStatus(err); code != 0 {
		writeError(w, code, err.Error())
		return
	}
	s.internalError(w, err)
}

// handleListProjects lists the AppProjects the caller may get.
func (s *Server) handleListProjects(w http.ResponseWriter, r *http.Request, c *session) {
	var list v1alpha1.AppProjectList
	if err := s.Client.List(r.Context(), &list, client.InNamespace(s.Namespace)); err != nil {
		s.internalError(w, err)
		return
	}
	p, err := s.policy(r.Context())
	if err != nil {
		s.internalError(w, err)
		return
	}
	items := make([]v1alpha1.AppProject, 0, len(list.Items))
	for _, proj := range list.Items {
		if p.permits(c, resProjects, actGet, proj.Name) {
			items = append(items, proj)
		}
	}
	list.Items, list.ListMeta = items, metav1.ListMeta{}
	list.APIVersion, list.Kind = v1alpha1.GroupVersion.String(), "AppProjectList"
	writeJSON(w, http.StatusOK, &list)
}
