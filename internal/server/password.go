package server

import (
	"encoding/json"
	"net/http"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"golang.org/x/crypto/bcrypt"
)

// Password length bounds: Argo CD asks for 8 or more; bcrypt reads 72 bytes.
const (
	minPasswordLength = 8
	maxPasswordLength = 72
)

// passwordRequest is Argo CD's UpdatePasswordRequest.
type passwordRequest struct {
	CurrentPassword string `json:"currentPassword"`
	NewPassword     string `json:"newPassword"`
	// Name is the account; empty means the caller's. Only the caller's
	// own password can be changed.
	Name string `json:"name"`
}

// handleUpdatePassword changes the caller's password, as
// `argocd account update-password` does: the current password must match,
// the new hash and passwordMtime go to argocd-secret, and every session
// issued before (this one included) stops working.
func (s *Server) handleUpdatePassword(w http.ResponseWriter, r *http.Request, c *session) {
	var req passwordRequest
	if !decodeJSON(w, r, 64<<10, &req) {
		return
	}
	user := c.user()
	if c.claims.SSO != nil {
		writeError(w, http.StatusBadRequest, "an SSO user has no local password: change it at the identity provider")
		return
	}
	if req.Name != "" && req.Name != user {
		writeError(w, http.StatusForbidden, "only your own password can be changed")
		return
	}
	if n := len(req.NewPassword); n < minPasswordLength || n > maxPasswordLength {
		writeError(w, http.StatusBadRequest, "the new password must have 8 to 72 characters")
		return
	}
	userKey := "user:" + user
	if _, blocked := s.userLimiter.Blocked(userKey); blocked {
		writeError(w, http.StatusTooManyRequests, "too many failed attempts: try again later")
		return
	}
	st, err := s.loadSettings(r.Context())
	if err != nil {
		s.internalError(w, err)
		return
	}
	acc, ok := st.accounts[user]
	if !ok || acc.PasswordHash == "" || bcrypt.CompareHashAndPassword([]byte(acc.PasswordHash), []byte(req.CurrentPassword)) != nil {
		s.userLimiter.Fail(userKey)
		writeError(w, http.StatusBadRequest, "current password does not match")
		return
	}
	hash, err := bcrypt.GenerateFromPassword([]byte(req.NewPassword), bcrypt.DefaultCost)
	if err != nil {
		s.internalError(w, err)
		return
	}
	hashKey, mtimeKey := "accounts."+user+".password", "accounts."+user+".passwordMtime"
	if user == adminUser {
		hashKey, mtimeKey = keyAdminPassword, keyAdminPasswordMtime
	}
	patch, err := json.Marshal(map[string]any{"data": map[string][]byte{
		hashKey:  hash,
		mtimeKey: formatMtime(s.now()),
	}})
	if err != nil {
		s.internalError(w, err)
		return
	}
	secret := &corev1.Secret{}
	secret.Namespace, secret.Name = s.Namespace, SecretName
	if err := s.Client.Patch(r.Context(), secret, client.RawPatch(types.MergePatchType, patch)); err != nil {
		s.internalError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{})
}
