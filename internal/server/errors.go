package server

import (
	"encoding/json"
	"errors"
	"net/http"

	"github.com/skiffcd/skiff/internal/opserr"
)

// apiError is the JSON body of every error the API returns.
type apiError struct {
	Error string `json:"error"`
	Code  int    `json:"code"`
}

// writeError answers with status code and a JSON error body.
func writeError(w http.ResponseWriter, code int, msg string) {
	writeJSON(w, code, apiError{Error: msg, Code: code})
}

// writeJSON answers with status code and v encoded as JSON.
func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

// decodeJSON reads a JSON body of at most limit bytes into v; it answers
// 400 (or 413) itself and returns false when the body is unusable.
func decodeJSON(w http.ResponseWriter, r *http.Request, limit int64, v any) bool {
	body := http.MaxBytesReader(w, r.Body, limit)
	dec := json.NewDecoder(body)
	if err := dec.Decode(v); err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			writeError(w, http.StatusRequestEntityTooLarge, "request body too large")
			return false
		}
		writeError(w, http.StatusBadRequest, "invalid JSON body: "+err.Error())
		return false
	}
	return true
}

// opStatus is the status that answers an error of the operations packages
// (appops, rolloutops) by its kind, with the error's message: 404, 400 or
// 409; 0 for the others, which are the server's (500).
func opStatus(err error) int {
	switch {
	case errors.Is(err, opserr.ErrNotFound):
		return http.StatusNotFound
	case errors.Is(err, opserr.ErrInvalid):
		return http.StatusBadRequest
	case errors.Is(err, opserr.ErrConflict):
		return http.StatusConflict
	}
	return 0
}
