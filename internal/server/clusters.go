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

// clusterOps reads cluster Secrets and argocd-cm from the settings cache,
// Applications from the manager's and the clusters' states from
// ClusterStates.
func (s *Server) clusterOps() clusterops.Ops {
	return clusterops.Ops{Reader: s.Settings, Apps: s.Client, Client: s.Client, Namespace: s.Namespace, States: s.ClusterStates}
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

// clusterAction finds the cluster of the path's server URL (path-escaped)
// or name and checks that the caller may do action on it.
func (s *Server) clusterAction(w http.ResponseWriter, r *http.Request, c *session, action string) (clusterops.Cluster, bool) {
	cl, err := s.clusterOps().Get(r.Context(), r.PathValue("id"))
	if err != nil {
		s.opError(w, err)
		return clusterops.Cluster{}, false
	}
	return cl, s.authorize(w, r, c, resClusters, action, cl.Server)
}

// answerCluster answers the result of an operation on a cluster.
func (s *Server) answerCluster(w http.ResponseWriter, cl clusterops.Cluster, err error) {
	if err != nil {
		s.opError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, cl)
}

// handleGetCluster answers one cluster.
func (s *Server) handleGetCluster(w http.ResponseWriter, r *http.Request, c *session) {
	if cl, ok := s.clusterAction(w, r, c, actGet); ok {
		writeJSON(w, http.StatusOK, cl)
	}
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
	s.answerCluster(w, cl, err)
}

// handleUpdateCluster replaces a cluster; its server stays.
func (s *Server) handleUpdateCluster(w http.ResponseWriter, r *http.Request, c *session) {
	var body clusterops.Cluster
	if !decodeJSON(w, r, clusterBodyLimit, &body) {
		return
	}
	existing, ok := s.clusterAction(w, r, c, actUpdate)
	if !ok {
		return
	}
	cl, err := s.clusterOps().Update(r.Context(), existing.Server, body.Spec())
	s.answerCluster(w, cl, err)
}

// handleDeleteCluster removes a cluster Secret; while apps target the
// cluster it answers 409 unless ?force=true.
func (s *Server) handleDeleteCluster(w http.ResponseWriter, r *http.Request, c *session) {
	existing, ok := s.clusterAction(w, r, c, actDelete)
	if !ok {
		return
	}
	if err := s.clusterOps().Delete(r.Context(), existing.Server, r.URL.Query().Get("force") == "true"); err != nil {
		s.opError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{})
}

// handleRotateClusterAuth gives a cluster a new argocd-manager token, with
// its stored credentials (RBAC: clusters, update).
func (s *Server) handleRotateClusterAuth(w http.ResponseWriter, r *http.Request, c *session) {
	existing, ok := s.clusterAction(w, r, c, actUpdate)
	if !ok {
		return
	}
	cl, err := s.clusterOps().RotateAuth(r.Context(), existing.Server, clusterops.TokenWait)
	s.answerCluster(w, cl, err)
}
