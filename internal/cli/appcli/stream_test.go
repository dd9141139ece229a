package appcli

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/skiffcd/skiff/api/v1alpha1"
	"github.com/skiffcd/skiff/internal/cli/sessioncli"
)

func event(t *testing.T, typ string, app *v1alpha1.Application) string {
	t.Helper()
	data, err := json.Marshal(map[string]any{"result": map[string]any{"type": typ, "application": app}})
	if err != nil {
		t.Fatal(err)
	}
	return "data: " + string(data) + "\n\n"
}

// A wait through the API server follows the application stream; when the
// stream is refused or ends early it reads the application instead.
func TestWaitFollowsTheStream(t *testing.T) {
	t0 := time.Date(2026, 12, 4, 8, 0, 0, 0, time.UTC)
	requested := withState(v1alpha1.OperationSucceeded, t0, true, true)
	running := withState(v1alpha1.OperationRunning, t0.Add(time.Minute), false, true)
	done := withState(v1alpha1.OperationSucceeded, t0.Add(time.Minute), true, false)
	other := done.DeepCopy()
	other.Name = "other"
	tests := map[string]struct {
		status int      // of the stream
		events []string // sent, then the stream stays open unless end
		end    bool
		// wantGets is how many reads the wait made.
		wantGets int64
	}{
		"the stream alone": {status: 200, events: []string{": ping\n\n", event(t, "ADDED", running), event(t, "MODIFIED", other),
			"event: message\n" + event(t, "MODIFIED", done)}},
		"a refused stream":       {status: 503, wantGets: 1},
		"a stream that ends":     {status: 200, events: []string{event(t, "ADDED", running)}, end: true, wantGets: 1},
		"a deleted app":          {status: 200, events: []string{event(t, "ADDED", running), event(t, "DELETED", running)}, wantGets: 1},
		"an event split in rows": {status: 200, events: []string{splitEvent(t, done)}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			var gets atomic.Int64
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				switch r.URL.Path {
				case "/api/v1/stream/applications":
					if r.URL.Query().Get("name") != "web" {
						t.Errorf("stream of %q", r.URL.RawQuery)
					}
					if tc.status != 200 {
						http.Error(w, `{"error":"streams are off","code":503}`, tc.status)
						return
					}
					w.Header().Set("Content-Type", "text/event-stream")
					for _, e := range tc.events {
						fmt.Fprint(w, e)
						w.(http.Flusher).Flush()
					}
					if !tc.end {
						<-r.Context().Done()
					}
				case "/api/v1/applications/web":
					gets.Add(1)
					_ = json.NewEncoder(w).Encode(done)
				default:
					t.Errorf("unexpected %s", r.URL)
				}
			}))
			defer srv.Close()
			a := &API{Client: sessioncli.NewClient(&sessioncli.Config{Server: srv.URL, Token: "t"})}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			var seen int
			app, err := Waiter{Backend: a, Interval: time.Millisecond, OnUpdate: func(*v1alpha1.Application) { seen++ }}.WaitOperation(ctx, "web", requested)
			if err != nil || app.Status.OperationState.Phase != v1alpha1.OperationSucceeded || app.Name != "web" {
				t.Fatalf("got %v (%v)", app, err)
			}
			if gets.Load() != tc.wantGets {
				t.Errorf("%d reads, want %d", gets.Load(), tc.wantGets)
			}
			if seen == 0 {
				t.Error("OnUpdate saw nothing")
			}
		})
	}
}

// splitEvent sends an event's JSON over two data rows, as the format
// allows (they join with a newline).
func splitEvent(t *testing.T, app *v1alpha1.Application) string {
	t.Helper()
	e := event(t, "ADDED", app)
	body := e[len("data: ") : len(e)-2]
	cut := len(`{"result":`)
	return "data: " + body[:cut] + "\ndata:" + body[cut:] + "\n\n"
}
