package testcluster_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/skiffcd/skiff/internal/testcluster"
)

// A port found free can be taken by another program before the component
// binds it, even by a server that answers health probes as the component
// would. The start must not take that server for its component: it sees
// its own component exit and says the port was taken, so Start tries again.
func TestAComponentWhosePortIsTakenIsNotTakenForReady(t *testing.T) {
	impostor := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusOK)
	}))
	defer impostor.Close()
	port := impostor.Listener.Addr().(*net.TCPAddr).Port
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	err := testcluster.StartControllerManager(ctx, cluster, t.TempDir(), port)
	if !errors.Is(err, testcluster.ErrPortTaken) {
		t.Fatalf("starting a controller manager on a taken port: %v, want an error that the port was taken", err)
	}
}
