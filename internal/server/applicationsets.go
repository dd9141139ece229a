package server

import (
	"net/http"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/skiffcd/skiff/api/v1alpha1"
	"github.com/skiffcd/skiff/internal/appsetops"
	"github.com/skiffcd/skiff/internal/opserr"
)

// resAppSets is the RBAC resource of ApplicationSets; the object is
// <project>/<name> with the project of the set's template, as in Argo CD.
const resAppSets = "applicationsets"

// appSetBodyLimit bounds an ApplicationSet in a request (List generators
// carry their elements).
const appSetBodyLimit = 4 << 20

func (s *Server) appSetOps() appsetops.Ops {
	return appsetops.Ops{Client: s.Client, Namespace: s.Namespace, Generate: s.GenerateAppSet}
}

// handleListAppSets lists the sets the caller may get (?selector= and
// ?projects= filter as for applications).
func (s *Server) handleListAppSets(w http.ResponseWriter, r *http.Request, c *session) {
	sets, err := s.appSetOps().List(r.Context(), r.URL.Query().Get("selector"), queryList(r, "projects"))
	if err != nil {
		s.opError(w, err)
		return
	}
	p, err := s.policy(r.Context())
	if err != nil {
		s.internalError(w, err)
		return
	}
	list := v1alpha1.ApplicationSetList{Items: make([]v1alpha1.ApplicationSet, 0, len(sets))}
	for i := range sets {
		if p.permits(c, resAppSets, actGet, appsetops.RBACObject(&sets[i])) {
			list.Items = append(list.Items, sets[i])
		}
	}
	list.TypeMeta = metav1.TypeMeta{APIVersion: v1alpha1.GroupVersion.String(), Kind: "ApplicationSetList"}
	writeJSON(w, http.StatusOK, &list)
}

// appSetAction reads the path's set and checks that the caller may do
// action on it; it answers errors itself.
func (s *Server) appSetAction(w http.ResponseWriter, r *http.Request, c *session, action string) (*v1alpha1.ApplicationSet, bool) {
	set, err := s.appSetOps().Get(r.Context(), r.PathValue("name"))
	if err != nil {
		s.opError(w, err)
		return nil, false
	}
	return set, s.authorize(w, r, c, resAppSets, action, appsetops.RBACObject(set))
}

// handleGetAppSet answers one set.
func (s *Server) handleGetAppSet(w http.ResponseWriter, r *http.Request, c *session) {
	if set, ok := s.appSetAction(w, r, c, actGet); ok {
		writeJSON(w, http.StatusOK, set)
	}
}

// handleCreateAppSet creates a set; ?upsert=true replaces an existing one
// (which needs update as well), ?dryRun=true writes nothing.
func (s *Server) handleCreateAppSet(w http.ResponseWriter, r *http.Request, c *session) {
	var set v1alpha1.ApplicationSet
	if !decodeJSON(w, r, appSetBodyLimit, &set) {
		return
	}
	q := r.URL.Query()
	upsert, dryRun := q.Get("upsert") == "true", q.Get("dryRun") == "true"
	// RBAC first: a refused caller learns nothing about existing sets.
	if !s.authorize(w, r, c, resAppSets, actCreate, appsetops.RBACObject(&set)) {
		return
	}
	if upsert && !s.authorize(w, r, c, resAppSets, actUpdate, appsetops.RBACObject(&set)) {
		return
	}
	if upsert {
		// A replaced set moves its apps from the old project: the caller
		// must be allowed to update the set where it is now too.
		if existing, err := s.appSetOps().Get(r.Context(), set.Name); err == nil {
			if !s.authorize(w, r, c, resAppSets, actUpdate, appsetops.RBACObject(existing)) {
				return
			}
		}
	}
	out, err := s.appSetOps().Create(r.Context(), &set, upsert, dryRun)
	if err != nil {
		s.opError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, out)
}

// handleDeleteAppSet deletes a set.
func (s *Server) handleDeleteAppSet(w http.ResponseWriter, r *http.Request, c *session) {
	set, ok := s.appSetAction(w, r, c, actDelete)
	if !ok {
		return
	}
	if err := s.appSetOps().Delete(r.Context(), set.Name); err != nil {
		s.opError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{})
}

// appSetGenerateRequest and appSetGenerateResponse are Argo CD's
// ApplicationSetGenerateRequest and -Response.
type appSetGenerateRequest struct {
	ApplicationSet *v1alpha1.ApplicationSet `json:"applicationSet"`
}

type appSetGenerateResponse struct {
	Applications []v1alpha1.Application `json:"applications"`
}

// handleGenerateAppSet answers the Applications a set would make now,
// writing nothing (RBAC: create on the set, as Argo CD checks).
func (s *Server) handleGenerateAppSet(w http.ResponseWriter, r *http.Request, c *session) {
	var req appSetGenerateRequest
	if !decodeJSON(w, r, appSetBodyLimit, &req) {
		return
	}
	if req.ApplicationSet == nil {
		s.opError(w, opserr.Invalid("the request has no applicationSet"))
		return
	}
	if !s.authorize(w, r, c, resAppSets, actCreate, appsetops.RBACObject(req.ApplicationSet)) {
		return
	}
	apps, err := s.appSetOps().Preview(r.Context(), req.ApplicationSet)
	if err != nil {
		s.opError(w, err)
		return
	}
	for i := range apps {
		apps[i].TypeMeta = metav1.TypeMeta{APIVersion: v1alpha1.GroupVersion.String(), Kind: "Application"}
	}
	writeJSON(w, http.StatusOK, appSetGenerateResponse{Applications: apps})
}
