package server

import (
	"net/http"

	"github.com/skiffcd/skiff/internal/clusterops"
)

// resClusters is the RBAC resource of clusters; the object is the
// cluster's server URL, as in Argo CD.
const resClusters = "clusters"

// clusterBodyLimit bounds a cluster in a request (certificates included).
const clusterBodyLimit = 1 << 20

// clusterOps reads cluster Secrets and argocd-cm from the settings cache
// and Applications from the manager's.
func (s *Server) clusterOps() clusterops.Ops {
	return clusterops.Ops{Reader: s.Settings, Apps: s.Client, Client: s.Client, Namespace: s.Namespace}
}

// handleListClusters lists the clusters the caller may get, and the
// cluster Secrets that cannot be read (their names and why, no values)
// when the caller may get every cluster.
func (s *Server) handleListClusters(w http.ResponseWriter, r *http.Request, c *session) {
	list, err := s.clusterOps().List(r.Context())
	if err != nil {
		s.opError(w, err)
		return
	}
	p, err := s.policy(r.Context())
	if err != nil {
		s.internalError(w, err)
		return
	}
	items := make([]clusterops.Cluster, 0, len(list.Items))
	for _, cl := range list.Items {
		if p.permits(c, resClusters, actGet, cl.Server) {
			items = append(items, cl)
		}
	}
	if len(items) != len(list.Items) {
		list.Invalid = nil
	}
	list.Items = items
	writeJSON(w, http.StatusOK, list)
}

// handleGetCluster answers one cluster by server URL (path-escaped) or name.
func (s *Server) handleGetCluster(w http.ResponseWriter, r *http.Request, c *session) {
	cl, err := s.clusterOps().Get(r.Context(), r.PathValue("id"))
	if err != nil {
		s.opError(w, err)
		return
	}
	if !s.authorize(w, r, c, resClusters, actGet, cl.Server) {
		return
	}
	writeJSON(w, http.StatusOK, cl)
}

// handleCreateCluster writes a cluster Secret; ?upsert=true replaces an
// existing cluster of the same server.
func (s *Server) handleCreateCluster(w http.ResponseWriter, r *http.Request, c *session) {
	var body clusterops.Cluster
	if !decodeJSON(w, r, clusterBodyLimit, &body) {
		return
	}
	if !s.authorize(w, r, c, resClusters, actCreate, body.Spec().Server) {
		return
	}
	cl, err := s.clusterOps().Save(r.Context(), body.Spec(), r.URL.Query().Get("upsert") == "true")
	if err != nil {
		s.opError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, cl)
}

// handleUpdateCluster replaces the cluster of a server URL or name.
func (s *Server) handleUpdateCluster(w http.ResponseWriter, r *http.Request, c *session) {
	var body clusterops.Cluster
	if !decodeJSON(w, r, clusterBodyLimit, &body) {
		return
	}
	ops := s.clusterOps()
	existing, err := ops.Get(r.Context(), r.PathValue("id"))
	if err != nil {
		s.opError(w, err)
		return
	}
	if !s.authorize(w, r, c, resClusters, actUpdate, existing.Server) {
		return
	}
	cl, err := ops.Update(r.Context(), existing.Server, body.Spec())
	if err != nil {
		s.opError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, cl)
}

// handleDeleteCluster removes a cluster Secret; while apps target the
// cluster it answers 409 unless ?force=true.
func (s *Server) handleDeleteCluster(w http.ResponseWriter, r *http.Request, c *session) {
	ops := s.clusterOps()
	existing, err := ops.Get(r.Context(), r.PathValue("id"))
	if err != nil {
		s.opError(w, err)
		return
	}
	if !s.authorize(w, r, c, resClusters, actDelete, existing.Server) {
		return
	}
	if err := ops.Delete(r.Context(), existing.Server, r.URL.Query().Get("force") == "true"); err != nil {
		s.opError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{})
}

// handleRotateClusterAuth gives a cluster a new argocd-manager token, with
// its stored credentials (RBAC: clusters, update).
func (s *Server) handleRotateClusterAuth(w http.ResponseWriter, r *http.Request, c *session) {
	ops := s.clusterOps()
	existing, err := ops.Get(r.Context(), r.PathValue("id"))
	if err != nil {
		s.opError(w, err)
		return
	}
	if !s.authorize(w, r, c, resClusters, actUpdate, existing.Server) {
		return
	}
	cl, err := ops.RotateAuth(r.Context(), existing.Server, clusterops.TokenWait)
	if err != nil {
		s.opError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, cl)
}
