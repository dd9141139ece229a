package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/skiffcd/skiff/api/v1alpha1"
	"github.com/skiffcd/skiff/internal/appops"
	"github.com/skiffcd/skiff/internal/reposerver"
)

// maxAppBytes bounds an Application body; real ones are a few KiB.
const maxAppBytes = 1 << 20

// validateApp checks an app before writing it as the controller checks it
// (appops.Validate): a body it refuses is a 400. A missing default project
// counts as Argo CD's default (the controller creates it).
func (s *Server) validateApp(ctx context.Context, app *v1alpha1.Application) error {
	_, _, err := appops.Validate(ctx, app, reposerver.CachedProjects(s.Client, s.Namespace), s.Clusters)
	return err
}

// writeAppError answers a failed validation or write.
func (s *Server) writeAppError(w http.ResponseWriter, err error) {
	switch {
	case errors.Is(err, appops.ErrInvalid):
		writeError(w, http.StatusBadRequest, "invalid application: "+err.Error())
	case apierrors.IsInvalid(err), apierrors.IsBadRequest(err):
		writeError(w, http.StatusBadRequest, err.Error())
	case apierrors.IsConflict(err):
		writeError(w, http.StatusConflict, "the application changed meanwhile: read it again and retry")
	case apierrors.IsAlreadyExists(err):
		writeError(w, http.StatusConflict, err.Error())
	default:
		s.internalError(w, err)
	}
}

// decodeApp reads an Application body and puts it in Skiff's namespace.
func (s *Server) decodeApp(w http.ResponseWriter, r *http.Request) (*v1alpha1.Application, bool) {
	app := &v1alpha1.Application{}
	if !decodeJSON(w, r, maxAppBytes, app) {
		return nil, false
	}
	// Skiff serves the Applications of its own namespace only.
	app.Namespace = s.Namespace
	app.APIVersion, app.Kind = v1alpha1.GroupVersion.String(), "Application"
	return app, true
}

// handleCreateApplication creates an app (RBAC create on project/name), as
// `argocd app create` does; an existing app is 409 unless ?upsert=true,
// which updates it (RBAC update) or returns it unchanged when equal.
func (s *Server) handleCreateApplication(w http.ResponseWriter, r *http.Request, c *session) {
	upsert := r.URL.Query().Get("upsert") == "true"
	app, ok := s.decodeApp(w, r)
	if !ok {
		return
	}
	// RBAC first: a refused caller learns nothing about projects.
	if !s.authorize(w, r, c, resApplications, actCreate, appObject(app)) {
		return
	}
	if err := s.validateApp(r.Context(), app); err != nil {
		s.writeAppError(w, err)
		return
	}
	// Server-owned fields are not the caller's to set.
	app.ResourceVersion, app.UID, app.Status, app.Operation = "", "", v1alpha1.ApplicationStatus{}, nil
	app.CreationTimestamp, app.DeletionTimestamp, app.ManagedFields = metav1.Time{}, nil, nil
	err := s.Client.Create(r.Context(), app)
	if err == nil {
		writeJSON(w, http.StatusOK, app)
		return
	}
	if !apierrors.IsAlreadyExists(err) {
		s.writeAppError(w, err)
		return
	}
	if !upsert {
		writeError(w, http.StatusConflict, "application "+app.Name+" already exists: use upsert to replace it")
		return
	}
	existing := &v1alpha1.Application{}
	if err := s.Client.Get(r.Context(), client.ObjectKeyFromObject(app), existing); err != nil {
		s.writeAppError(w, err)
		return
	}
	s.updateApp(w, r, c, existing, app)
}

// handleUpdateApplication replaces an app's spec, labels, annotations and
// finalizers (RBAC update on its project and, when the body moves it, on
// the new one); the status stays. A resourceVersion in the body must
// match (409 otherwise), as must the name.
func (s *Server) handleUpdateApplication(w http.ResponseWriter, r *http.Request, c *session) {
	app, ok := s.decodeApp(w, r)
	if !ok {
		return
	}
	if app.Name == "" {
		app.Name = r.PathValue("name")
	}
	if app.Name != r.PathValue("name") {
		writeError(w, http.StatusBadRequest, fmt.Sprintf("metadata.name %q does not match the path's %q", app.Name, r.PathValue("name")))
		return
	}
	existing, ok := s.getApp(w, r, c, actUpdate)
	if !ok {
		return
	}
	if err := s.validateApp(r.Context(), app); err != nil {
		s.writeAppError(w, err)
		return
	}
	s.updateApp(w, r, c, existing, app)
}

// updateApp writes app's spec and metadata over existing with optimistic
// locking; the caller has checked update on existing's project.
func (s *Server) updateApp(w http.ResponseWriter, r *http.Request, c *session, existing, app *v1alpha1.Application) {
	if !s.authorize(w, r, c, resApplications, actUpdate, appObject(existing)) ||
		!s.authorize(w, r, c, resApplications, actUpdate, appObject(app)) {
		return
	}
	if app.ResourceVersion != "" && app.ResourceVersion != existing.ResourceVersion {
		writeError(w, http.StatusConflict, "the application changed meanwhile: read it again and retry")
		return
	}
	existing.APIVersion, existing.Kind = v1alpha1.GroupVersion.String(), "Application"
	updated := existing.DeepCopy()
	updated.Spec, updated.Labels, updated.Annotations, updated.Finalizers = app.Spec, app.Labels, app.Annotations, app.Finalizers
	if equality.Semantic.DeepEqual(updated, existing) {
		writeJSON(w, http.StatusOK, existing)
		return
	}
	// Update sends existing's resourceVersion: a change since the read is
	// a conflict, not a lost write.
	if err := s.Client.Update(r.Context(), updated); err != nil {
		s.writeAppError(w, err)
		return
	}
	updated.APIVersion, updated.Kind = v1alpha1.GroupVersion.String(), "Application"
	writeJSON(w, http.StatusOK, updated)
}
