package server

import "net/http"

// handleCanI answers Argo CD's GET /api/v1/account/can-i/{resource}/{action}/{object}
// with {"value": "yes"} or {"value": "no"}, so that the web UI hides what
// RBAC forbids (the object, such as <project>/<app>, may hold slashes).
func (s *Server) handleCanI(w http.ResponseWriter, r *http.Request, c *session) {
	p, err := s.policy(r.Context())
	if err != nil {
		s.internalError(w, err)
		return
	}
	value := "no"
	if p.permits(c, r.PathValue("resource"), r.PathValue("action"), r.PathValue("object")) {
		value = "yes"
	}
	writeJSON(w, http.StatusOK, map[string]string{"value": value})
}
