package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/skiffcd/skiff/api/v1alpha1"
)

// Stream tuning: a heartbeat keeps proxies from closing an idle stream; a
// subscriber whose buffer is full is dropped (the client reconnects and
// gets every object again) so that it never holds up the others; a write
// that takes longer than streamWriteTimeout ends the stream.
var (
	streamHeartbeat    = 15 * time.Second
	streamBuffer       = 256
	streamWriteTimeout = 30 * time.Second
)

// Event types of a stream, as Argo CD's watch API names them.
const (
	eventAdded    = "ADDED"
	eventModified = "MODIFIED"
	eventDeleted  = "DELETED"
)

// streamEvent is one change of a watched object; obj is shared by every
// subscriber and must not be modified.
type streamEvent struct {
	typ string
	obj client.Object
}

// streamSub is one open stream of one kind ("application" or "rollout").
type streamSub struct {
	kind string
	ch   chan streamEvent
}

// streamHub feeds informer events to the open streams.
type streamHub struct {
	mu   sync.Mutex
	subs map[*streamSub]struct{}
	// regMu guards registered apart from mu: handlers publish (taking mu)
	// while a registration may be under way.
	regMu      sync.Mutex
	registered map[string]bool // kinds whose informer handler is added
	stop       chan struct{}
	stopOnce   sync.Once
}

func newStreamHub() *streamHub {
	return &streamHub{subs: map[*streamSub]struct{}{}, registered: map[string]bool{}, stop: make(chan struct{})}
}

// end closes every stream: the server is stopping.
func (h *streamHub) end() { h.stopOnce.Do(func() { close(h.stop) }) }

func (h *streamHub) subscribe(kind string) *streamSub {
	sub := &streamSub{kind: kind, ch: make(chan streamEvent, streamBuffer)}
	h.mu.Lock()
	h.subs[sub] = struct{}{}
	h.mu.Unlock()
	return sub
}

func (h *streamHub) unsubscribe(sub *streamSub) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if _, ok := h.subs[sub]; ok {
		delete(h.subs, sub)
		close(sub.ch)
	}
}

// publish hands e to every stream of kind; a full buffer drops its stream
// (its channel closes) instead of waiting.
func (h *streamHub) publish(kind string, e streamEvent) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for sub := range h.subs {
		if sub.kind != kind {
			continue
		}
		select {
		case sub.ch <- e:
		default:
			delete(h.subs, sub)
			close(sub.ch)
		}
	}
}

// ensureWatch adds, once per kind, a handler on the manager's informer of
// obj's type that publishes its changes.
func (s *Server) ensureWatch(ctx context.Context, kind string, obj client.Object) error {
	if s.Informers == nil {
		return fmt.Errorf("%w: event streams are not configured", errNotReady)
	}
	h := s.streams
	h.regMu.Lock()
	defer h.regMu.Unlock()
	if h.registered[kind] {
		return nil
	}
	inf, err := s.Informers.GetInformer(ctx, obj)
	if err != nil {
		return fmt.Errorf("watching %ss: %w", kind, err)
	}
	publish := func(typ string, o any) {
		if tomb, ok := o.(toolscache.DeletedFinalStateUnknown); ok {
			o = tomb.Obj
		}
		co, ok := o.(client.Object)
		if !ok {
			return
		}
		co = co.DeepCopyObject().(client.Object)
		setTypeMeta(co)
		h.publish(kind, streamEvent{typ: typ, obj: co})
	}
	_, err = inf.AddEventHandler(toolscache.ResourceEventHandlerDetailedFuncs{
		AddFunc: func(o any, initial bool) {
			// Streams list the existing objects themselves; the replay of
			// them to a new handler would only fill the first streams'
			// buffers.
			if !initial {
				publish(eventAdded, o)
			}
		},
		UpdateFunc: func(old, o any) {
			oldObj, ok1 := old.(client.Object)
			newObj, ok2 := o.(client.Object)
			if ok1 && ok2 && oldObj.GetResourceVersion() == newObj.GetResourceVersion() {
				return // a resync, not a change
			}
			publish(eventModified, o)
		},
		DeleteFunc: func(o any) { publish(eventDeleted, o) },
	})
	if err != nil {
		return fmt.Errorf("watching %ss: %w", kind, err)
	}
	h.registered[kind] = true
	return nil
}

func setTypeMeta(o client.Object) {
	switch v := o.(type) {
	case *v1alpha1.Application:
		v.APIVersion, v.Kind = v1alpha1.GroupVersion.String(), "Application"
	case *v1alpha1.Rollout:
		v.APIVersion, v.Kind = v1alpha1.GroupVersion.String(), "Rollout"
	}
}

// streamSpec says what one stream sends: the objects that exist when it
// opens and whether the caller may see an object.
type streamSpec struct {
	kind    string // "application" or "rollout": the result's field
	obj     client.Object
	list    func(context.Context) ([]client.Object, error)
	visible func(context.Context, client.Object) (bool, error)
}

// serveStream writes spec's events as server-sent events until the client
// goes, its buffer overflows or the server stops.
func (s *Server) serveStream(w http.ResponseWriter, r *http.Request, spec streamSpec) {
	ctx := r.Context()
	if err := s.ensureWatch(ctx, spec.kind, spec.obj); err != nil {
		s.internalError(w, err)
		return
	}
	// Subscribe before listing: a change in between comes twice rather
	// than never.
	sub := s.streams.subscribe(spec.kind)
	defer s.streams.unsubscribe(sub)
	initial, err := spec.list(ctx)
	if err != nil {
		s.internalError(w, err)
		return
	}
	rc := http.NewResponseController(w)
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Accel-Buffering", "no") // nginx would hold the events back
	w.WriteHeader(http.StatusOK)
	send := func(data []byte) error {
		// The server's WriteTimeout would cut the stream: each write gets
		// its own deadline instead.
		if err := rc.SetWriteDeadline(time.Now().Add(streamWriteTimeout)); err != nil {
			return err
		}
		if _, err := w.Write(data); err != nil {
			return err
		}
		return rc.Flush()
	}
	event := func(e streamEvent) error {
		ok, err := spec.visible(ctx, e.obj)
		if err != nil || !ok {
			return err
		}
		data, err := json.Marshal(map[string]any{"result": map[string]any{"type": e.typ, spec.kind: e.obj}})
		if err != nil {
			return err
		}
		return send(append(append([]byte("data: "), data...), '\n', '\n'))
	}
	if err := send([]byte(": connected\n\n")); err != nil {
		return
	}
	for _, o := range initial {
		setTypeMeta(o)
		if err := event(streamEvent{typ: eventAdded, obj: o}); err != nil {
			s.streamEnded(err)
			return
		}
	}
	heartbeat := time.NewTicker(streamHeartbeat)
	defer heartbeat.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-s.streams.stop:
			return
		case <-heartbeat.C:
			// A stream outlives its login: a logout, a disabled account
			// or a new password ends it at the next heartbeat.
			if _, err := s.sessionOf(r); err != nil {
				s.streamEnded(err)
				return
			}
			if err := send([]byte(": ping\n\n")); err != nil {
				return
			}
		case e, ok := <-sub.ch:
			if !ok {
				return // too slow: dropped
			}
			if err := event(e); err != nil {
				s.streamEnded(err)
				return
			}
		}
	}
}

// objectsOf points at each item of a list.
func objectsOf[T any, PT interface {
	*T
	client.Object
}](items []T) []client.Object {
	out := make([]client.Object, 0, len(items))
	for i := range items {
		out = append(out, PT(&items[i]))
	}
	return out
}

// streamEnded logs why a stream stopped, unless the client simply left.
func (s *Server) streamEnded(err error) {
	if !errors.Is(err, context.Canceled) {
		s.Log.Info("api event stream ended", "error", err)
	}
}

// handleStreamApplications streams changes of the apps the caller may get
// (?name= one of them).
func (s *Server) handleStreamApplications(w http.ResponseWriter, r *http.Request, c *session) {
	name := r.URL.Query().Get("name")
	s.serveStream(w, r, streamSpec{
		kind: "application",
		obj:  &v1alpha1.Application{},
		list: func(ctx context.Context) ([]client.Object, error) {
			var list v1alpha1.ApplicationList
			if err := s.Client.List(ctx, &list, client.InNamespace(s.Namespace)); err != nil {
				return nil, err
			}
			return objectsOf(list.Items), nil
		},
		visible: func(ctx context.Context, o client.Object) (bool, error) {
			app, ok := o.(*v1alpha1.Application)
			if !ok || app.Namespace != s.Namespace || (name != "" && app.Name != name) {
				return false, nil
			}
			p, err := s.policy(ctx)
			if err != nil {
				return false, err
			}
			return p.permits(c, resApplications, actGet, appObject(app)), nil
		},
	})
}

// handleStreamRollouts streams changes of the Rollouts the caller may get
// (?namespace= and ?name= narrow them), guarded as handleListRollouts
// guards them.
func (s *Server) handleStreamRollouts(w http.ResponseWriter, r *http.Request, c *session) {
	namespace, name := r.URL.Query().Get("namespace"), r.URL.Query().Get("name")
	s.serveStream(w, r, streamSpec{
		kind: "rollout",
		obj:  &v1alpha1.Rollout{},
		list: func(ctx context.Context) ([]client.Object, error) {
			var list v1alpha1.RolloutList
			var opts []client.ListOption
			if namespace != "" {
				opts = append(opts, client.InNamespace(namespace))
			}
			if err := s.Client.List(ctx, &list, opts...); err != nil {
				return nil, err
			}
			return objectsOf(list.Items), nil
		},
		visible: func(ctx context.Context, o client.Object) (bool, error) {
			ro, ok := o.(*v1alpha1.Rollout)
			if !ok || (namespace != "" && ro.Namespace != namespace) || (name != "" && ro.Name != name) {
				return false, nil
			}
			guard, err := s.rolloutAuth(r, ro)
			if err != nil {
				return false, err
			}
			p, err := s.policy(ctx)
			if err != nil {
				return false, err
			}
			return p.permits(c, guard.resource, actGet, guard.object), nil
		},
	})
}
