package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/skiffcd/skiff/api/v1alpha1"
	"github.com/skiffcd/skiff/internal/appops"
	"github.com/skiffcd/skiff/internal/source"
	"github.com/skiffcd/skiff/internal/source/helmrepo"
)

// renderTimeout bounds a render below the server's 2-minute WriteTimeout,
// so that a slow repository gets an error answer instead of a cut one.
const renderTimeout = 90 * time.Second

// appRenderer reads the app of the path (RBAC get) and a renderer that
// also renders from git; it answers errors itself.
func (s *Server) appRenderer(w http.ResponseWriter, r *http.Request, c *session) (*v1alpha1.Application, *appops.Renderer, bool) {
	app, ok := s.getApp(w, r, c, actGet)
	if !ok {
		return nil, nil, false
	}
	rend, err := s.renderer(app)
	if err == nil && s.Repo == nil {
		err = fmt.Errorf("%w: rendering is not configured", errNotReady)
	}
	if err != nil {
		s.renderError(w, err) // an unknown destination cluster is a 400
		return nil, nil, false
	}
	return app, rend, true
}

// renderError answers a failed render: a revision that matches nothing in
// the repository is the caller's mistake (400), a timeout is 504, and
// anything else is ours (500), with its message (a wrong path, a repository
// that cannot be reached) to read.
func (s *Server) renderError(w http.ResponseWriter, err error) {
	switch {
	case errors.Is(err, errNotReady):
		s.internalError(w, err)
	case errors.Is(err, appops.ErrInvalid), unknownRevision(err):
		writeError(w, http.StatusBadRequest, err.Error())
	case errors.Is(err, context.DeadlineExceeded):
		writeError(w, http.StatusGatewayTimeout, "rendering took too long: "+err.Error())
	default:
		s.Log.Error("api render failed", "error", err)
		writeError(w, http.StatusInternalServerError, err.Error())
	}
}

// unknownRevision reports whether err is a revision that no branch, tag or
// commit of the repository matches when resolving it, or a chart version
// the Helm repository does not list: not a revision the cache lost, which
// is ours.
func unknownRevision(err error) bool {
	var repoErr *source.RepoError
	return errors.As(err, &repoErr) && repoErr.Op == source.OpResolve && errors.Is(repoErr, source.ErrRevisionNotFound) ||
		errors.Is(err, helmrepo.ErrVersionNotFound)
}

// handleManagedResources compares every resource of an app with git, as
// Argo CD's managed-resources does (RBAC get).
func (s *Server) handleManagedResources(w http.ResponseWriter, r *http.Request, c *session) {
	app, rend, ok := s.appRenderer(w, r, c)
	if !ok {
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), renderTimeout)
	defer cancel()
	states, err := rend.Compare(ctx, app, "")
	if err != nil {
		s.renderError(w, err)
		return
	}
	items, err := appops.ManagedResources(states)
	if err != nil {
		s.internalError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"items": items})
}

// handleManifests renders an app at ?revision= (default its target), as
// `argocd app manifests --source git` does (RBAC get).
func (s *Server) handleManifests(w http.ResponseWriter, r *http.Request, c *session) {
	app, rend, ok := s.appRenderer(w, r, c)
	if !ok {
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), renderTimeout)
	defer cancel()
	objs, revisions, err := rend.Desired(ctx, app, r.URL.Query().Get("revision"))
	if err != nil {
		s.renderError(w, err)
		return
	}
	manifests := make([]string, 0, len(objs))
	for _, obj := range objs {
		m, err := appops.MaskedJSON(obj)
		if err != nil {
			s.internalError(w, err)
			return
		}
		manifests = append(manifests, m)
	}
	revision := ""
	if len(revisions) > 0 {
		revision = revisions[0]
	}
	writeJSON(w, http.StatusOK, map[string]any{"manifests": manifests, "revision": revision})
}

// handleResource returns the live manifest of one object of an app's tree
// (RBAC get on the app); objects outside the tree are 404 so that the
// endpoint cannot read arbitrary objects, Secrets above all.
func (s *Server) handleResource(w http.ResponseWriter, r *http.Request, c *session) {
	_, obj, ok := s.appResource(w, r, c, resourceQueryOf(r.URL.Query()), actGet)
	if !ok {
		return
	}
	manifest, err := appops.MaskedJSON(obj)
	if err != nil {
		s.internalError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"manifest": manifest})
}
