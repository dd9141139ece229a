package analysis

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

// okServer answers {"data":{"ok":true}} on 127.0.0.1 until the test ends.
func okServer(t *testing.T) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte(`{"data":{"ok":true}}`))
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}
