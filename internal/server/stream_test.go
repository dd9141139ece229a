package server

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/skiffcd/skiff/api/v1alpha1"
)

// sseEvent is one message of an event stream: a comment or a result.
type sseEvent struct {
	comment string
	Result  struct {
		Type        string
		Application *v1alpha1.Application
		Rollout     *v1alpha1.Rollout
	}
}

func (e sseEvent) String() string {
	switch {
	case e.comment != "":
		return ":" + e.comment
	case e.Result.Application != nil:
		return e.Result.Type + " application " + e.Result.Application.Name
	case e.Result.Rollout != nil:
		return e.Result.Type + " rollout " + e.Result.Rollout.Name
	}
	return e.Result.Type
}

// openStream opens an event stream that lasts until the test ends and
// returns its messages.
func (h *harness) openStream(path, token string) <-chan sseEvent {
	h.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	h.t.Cleanup(cancel)
	return h.openStreamUntil(ctx, path, token)
}

// openStreamUntil opens an event stream that lasts until ctx ends.
func (h *harness) openStreamUntil(ctx context.Context, path, token string) <-chan sseEvent {
	h.t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, h.url+path, nil)
	if err != nil {
		h.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	// No client timeout: it would cut the stream; the context ends it.
	resp, err := (&http.Client{Transport: h.http.Transport}).Do(req)
	if err != nil {
		h.t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		resp.Body.Close()
		h.t.Fatalf("stream %s: %d %s", path, resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	ch := make(chan sseEvent, 100)
	go func() {
		defer close(ch)
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 64<<10), 4<<20)
		for sc.Scan() {
			var e sseEvent
			line := sc.Text()
			switch {
			case strings.HasPrefix(line, ": "):
				e.comment = strings.TrimPrefix(line, ": ")
			case strings.HasPrefix(line, "data: "):
				if err := json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &e); err != nil {
					e.comment = "undecodable " + err.Error()
				}
			default:
				continue
			}
			select {
			case ch <- e:
			case <-ctx.Done():
				return
			}
		}
	}()
	return ch
}

// waitEvent reads ch until want matches (at most 20 s and 1000 messages)
// and returns what it read.
func waitEvent(t *testing.T, ch <-chan sseEvent, what string, want func(sseEvent) bool) []sseEvent {
	t.Helper()
	timeout := time.After(20 * time.Second)
	var seen []sseEvent
	for len(seen) < 1000 {
		select {
		case e, ok := <-ch:
			if !ok {
				t.Fatalf("stream ended before %s; saw %v", what, seen)
			}
			seen = append(seen, e)
			if want(e) {
				return seen
			}
		case <-timeout:
			t.Fatalf("no %s within 20s; saw %v", what, seen)
		}
	}
	t.Fatalf("no %s in 1000 messages", what)
	return nil
}

func isApp(typ, name string) func(sseEvent) bool {
	return func(e sseEvent) bool {
		return e.Result.Type == typ && e.Result.Application != nil && e.Result.Application.Name == name
	}
}

// Streams of apps and Rollouts: every visible object comes first as ADDED,
// a change arrives as MODIFIED, a user sees nothing of an app they may not
// get, heartbeats come while nothing changes, and an open stream does not
// keep the server from stopping.
func TestStreams(t *testing.T) {
	heartbeat, readTimeout, writeTimeout := streamHeartbeat, serverReadTimeout, serverWriteTimeout
	// Short server timeouts: the streams must outlive them.
	streamHeartbeat, serverReadTimeout, serverWriteTimeout = 300*time.Millisecond, time.Second, 2*time.Second
	t.Cleanup(func() { streamHeartbeat, serverReadTimeout, serverWriteTimeout = heartbeat, readTimeout, writeTimeout })
	// Cleanups run last first: this stream outlives the server, whose
	// cleanup fails the test if the stream holds its shutdown up.
	lingering, stopLingering := context.WithCancel(context.Background())
	t.Cleanup(stopLingering)
	h := startFullServer(t)
	h.addUser("alice", "alice-password")
	h.setRBAC(map[string]string{"policy.csv": "p, alice, applications, get, default/visible, allow\n"})
	src := v1alpha1.ApplicationSource{RepoURL: "https://github.com/org/repo", Path: "shop"}
	h.createApp("visible", "default", nil, src)
	h.createApp("hidden", "default", nil, src)
	admin, alice := h.login("admin", h.password), h.login("alice", "alice-password")
	wantError(t, h.do(http.MethodGet, "/api/v1/stream/applications", "", nil), http.StatusUnauthorized)
	waitEvent(t, h.openStreamUntil(lingering, "/api/v1/stream/applications", admin), "ADDED hidden", isApp(eventAdded, "hidden"))

	opened := time.Now()
	aliceStream := h.openStream("/api/v1/stream/applications", alice)
	adminStream := h.openStream("/api/v1/stream/applications?name=hidden", admin)
	seen := waitEvent(t, aliceStream, "ADDED visible", isApp(eventAdded, "visible"))
	waitEvent(t, adminStream, "ADDED hidden", isApp(eventAdded, "hidden"))

	// hidden changes first: when alice sees visible's change, hidden's has
	// passed her stream (one informer delivers both in order).
	h.updateApp("hidden", func(a *v1alpha1.Application) { a.Annotations = map[string]string{"changed": "yes"} })
	h.updateApp("visible", func(a *v1alpha1.Application) { a.Annotations = map[string]string{"changed": "yes"} })
	seen = append(seen, waitEvent(t, aliceStream, "MODIFIED visible", func(e sseEvent) bool {
		return isApp(eventModified, "visible")(e) && e.Result.Application.Annotations["changed"] == "yes"
	})...)
	for _, e := range seen {
		if e.Result.Application != nil && e.Result.Application.Name != "visible" {
			t.Errorf("alice saw %v", e)
		}
		if e.Result.Application != nil && (e.Result.Application.Kind != "Application" || e.Result.Application.APIVersion == "") {
			t.Errorf("an application without its kind: %v", e)
		}
	}
	for _, e := range waitEvent(t, adminStream, "MODIFIED hidden", isApp(eventModified, "hidden")) {
		if e.Result.Application != nil && e.Result.Application.Name != "hidden" {
			t.Errorf("admin's stream of hidden sent %v", e)
		}
	}
	waitEvent(t, aliceStream, "a heartbeat", func(e sseEvent) bool { return e.comment == "ping" })

	rollouts := h.openStream("/api/v1/stream/rollouts?namespace="+h.ns, admin)
	h.createRollout("canary", nil)
	waitEvent(t, rollouts, "ADDED canary", func(e sseEvent) bool {
		return e.Result.Type == eventAdded && e.Result.Rollout != nil && e.Result.Rollout.Name == "canary"
	})
	if err := h.k8s.Delete(context.Background(), h.getRollout("canary")); err != nil {
		t.Fatal(err)
	}
	waitEvent(t, rollouts, "DELETED canary", func(e sseEvent) bool {
		return e.Result.Type == eventDeleted && e.Result.Rollout != nil && e.Result.Rollout.Name == "canary"
	})

	// Past the server's read and write timeouts alice's stream still works.
	time.Sleep(time.Until(opened.Add(3 * time.Second)))
	h.updateApp("visible", func(a *v1alpha1.Application) { a.Annotations["changed"] = "again" })
	waitEvent(t, aliceStream, "MODIFIED visible after the server's timeouts", func(e sseEvent) bool {
		return isApp(eventModified, "visible")(e) && e.Result.Application.Annotations["changed"] == "again"
	})

	// A logout ends the stream at the next heartbeat.
	if r := h.do(http.MethodDelete, "/api/v1/session", alice, nil); r.status != http.StatusOK {
		t.Fatalf("logout: %d %s", r.status, r.body)
	}
	timeout := time.After(20 * time.Second)
	for n := 0; ; n++ {
		select {
		case _, open := <-aliceStream:
			if !open {
				return
			}
			if n > 1000 {
				t.Fatal("alice's stream goes on after her logout")
			}
		case <-timeout:
			t.Fatal("alice's stream still open 20s after her logout")
		}
	}
}

// A subscriber that does not read is dropped when its buffer fills; the
// others keep getting every event.
func TestStreamHubDropsSlowSubscribers(t *testing.T) {
	hub := newStreamHub()
	slow, fast := hub.subscribe("application"), hub.subscribe("application")
	rollouts := hub.subscribe("rollout")
	got := 0
	for i := 0; i < streamBuffer+10; i++ {
		hub.publish("application", streamEvent{typ: eventAdded})
		if _, ok := <-fast.ch; ok {
			got++
		}
	}
	if got != streamBuffer+10 {
		t.Errorf("the reading subscriber got %d events, want %d", got, streamBuffer+10)
	}
	n := 0
	for range slow.ch { // closed once full: the loop ends
		n++
		if n > streamBuffer {
			t.Fatalf("slow subscriber got more than its buffer")
		}
	}
	if n != streamBuffer {
		t.Errorf("slow subscriber got %d events before being dropped, want %d", n, streamBuffer)
	}
	if len(rollouts.ch) != 0 {
		t.Errorf("a rollout stream got %d application events", len(rollouts.ch))
	}
	hub.unsubscribe(slow) // already dropped: no double close
	hub.unsubscribe(fast)
}
