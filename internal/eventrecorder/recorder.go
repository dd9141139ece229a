// Package eventrecorder writes Kubernetes Events (events.k8s.io/v1) for
// Skiff's controllers, in the background. A repeat of an Event (same
// object, type, reason, action and note) within ten minutes is folded into
// the first one's series, written at most once per ten minutes, as client-go's
// broadcaster does; unlike it, what is remembered per Event is a key and
// a count, not the Event: the broadcaster kept every Event it wrote for six
// minutes, and with hundreds of apps syncing, whose completion events name
// the revision and so never repeat, that cache grew with every commit.
package eventrecorder

import (
	"context"
	"fmt"
	"os"
	"sync"
	"time"
	"unicode/utf8"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/events"
	"k8s.io/client-go/tools/reference"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/skiffcd/skiff/internal/digest"
)

const (
	// queueSize bounds the writes waiting; beyond it new Events are
	// dropped, as client-go's broadcaster drops them.
	queueSize = 1000
	// writers write concurrently, so a burst (every app syncing after one
	// commit) is written while it happens: with four, a thousand syncs'
	// Events trailed them by half a minute on a busy API server (client-go's
	// broadcaster starts a goroutine per Event).
	writers = 16
	// maxNoteBytes is the API's limit on an Event's note.
	maxNoteBytes = 1024
	// seriesWindow is how long a written Event takes repeats into its
	// series, and how often a grown series is written.
	seriesWindow = 10 * time.Minute
	// maxSeries bounds the Events remembered for folding; beyond it a
	// repeat is written as a new Event.
	maxSeries = 8192
)

// Sink writes the Events its recorders are given. Start runs it.
type Sink struct {
	client client.Client
	scheme *runtime.Scheme
	queue  chan write
	// Now is the clock; NewSink sets time.Now.
	Now func() time.Time

	mu     sync.Mutex
	series map[seriesKey]*series
}

// write is one request: a new Event, or a series update of a written one.
type write struct {
	event *eventsv1.Event
	patch client.Patch
}

// seriesKey is what makes two Events the same — the object (its UID, kind,
// namespace and name), type, reason, action, note and reporting controller —
// as a SHA-256 prefix: up to maxSeries Events are remembered, and their
// fields took about 200 bytes each.
type seriesKey [16]byte

func newSeriesKey(fields ...string) seriesKey {
	sum := digest.Strings(fields...)
	return seriesKey(sum[:len(seriesKey{})])
}

type series struct {
	name, namespace string
	count           int32
	last            time.Time
	written         time.Time // when the Event or its series was last written
}

// NewSink returns a Sink that writes Events with c; scheme resolves the
// kinds of the objects events are about.
func NewSink(c client.Client, scheme *runtime.Scheme) *Sink {
	return &Sink{client: c, scheme: scheme, queue: make(chan write, queueSize), Now: time.Now,
		series: map[seriesKey]*series{}}
}

// Start writes queued Events, and grown series every seriesWindow, until
// ctx ends; what is queued then is dropped. It is a manager.Runnable.
func (s *Sink) Start(ctx context.Context) error {
	var wg sync.WaitGroup
	for range writers {
		wg.Go(func() {
			for {
				select {
				case <-ctx.Done():
					return
				case w := <-s.queue:
					s.write(ctx, w)
				}
			}
		})
	}
	tick := time.NewTicker(seriesWindow)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			wg.Wait()
			return nil
		case <-tick.C:
			s.flushSeries()
		}
	}
}

// NeedLeaderElection is false: a standby replica's controllers record
// nothing, and the leader's Events must not wait for an election.
func (s *Sink) NeedLeaderElection() bool { return false }

func (s *Sink) write(ctx context.Context, w write) {
	var err error
	if w.patch != nil {
		err = s.client.Patch(ctx, w.event, w.patch)
	} else {
		err = s.client.Create(ctx, w.event)
	}
	if err != nil && !apierrors.IsAlreadyExists(err) && ctx.Err() == nil {
		// An Event is best effort: the caller has moved on.
		logf.FromContext(ctx).Info("could not write Event", "reason", w.event.Reason, "name", w.event.Name, "error", err.Error())
	}
}

func (s *Sink) enqueue(w write) {
	select {
	case s.queue <- w:
	default:
	}
}

// flushSeries writes the series that grew since they were last written and
// forgets those that did not repeat within seriesWindow.
func (s *Sink) flushSeries() {
	now := s.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	for key, sr := range s.series {
		switch {
		case sr.last.After(sr.written):
			s.enqueue(seriesUpdate(sr))
			sr.written = now
		case now.Sub(sr.last) >= seriesWindow:
			delete(s.series, key)
		}
	}
}

func seriesUpdate(sr *series) write {
	ev := &eventsv1.Event{ObjectMeta: metav1.ObjectMeta{Name: sr.name, Namespace: sr.namespace}}
	patch := fmt.Sprintf(`{"series":{"count":%d,"lastObservedTime":%q}}`,
		sr.count, sr.last.UTC().Format("2006-01-02T15:04:05.000000Z07:00"))
	return write{event: ev, patch: client.RawPatch("application/merge-patch+json", []byte(patch))}
}

// Recorder returns an EventRecorder whose Events name controller as their
// reporting controller.
func (s *Sink) Recorder(controller string) events.EventRecorder {
	instance := controller
	if host, err := os.Hostname(); err == nil {
		instance = controller + "-" + host
	}
	if len(instance) > 128 {
		instance = instance[:128]
	}
	return &recorder{sink: s, controller: controller, instance: instance}
}

type recorder struct {
	sink                 *Sink
	controller, instance string
}

// Eventf records an Event about regarding. It never blocks: when the
// queue is full the Event is dropped.
func (r *recorder) Eventf(regarding, related runtime.Object, eventtype, reason, action, note string, args ...any) {
	if eventtype != corev1.EventTypeNormal && eventtype != corev1.EventTypeWarning {
		return
	}
	ref, err := reference.GetReference(r.sink.scheme, regarding)
	if err != nil {
		return
	}
	var relatedRef *corev1.ObjectReference
	if related != nil {
		relatedRef, _ = reference.GetReference(r.sink.scheme, related)
	}
	now := r.sink.Now()
	namespace := ref.Namespace
	if namespace == "" {
		namespace = metav1.NamespaceDefault
	}
	note = truncate(fmt.Sprintf(note, args...), maxNoteBytes)
	name := fmt.Sprintf("%s.%x", ref.Name, now.UnixNano())
	key := newSeriesKey(string(ref.UID), ref.Kind, ref.Namespace, ref.Name, eventtype, reason, action, note, r.controller)
	if !r.sink.remember(key, name, namespace, now) {
		return
	}
	r.sink.enqueue(write{event: &eventsv1.Event{
		ObjectMeta:          metav1.ObjectMeta{Name: name, Namespace: namespace},
		EventTime:           metav1.NewMicroTime(now),
		ReportingController: r.controller,
		ReportingInstance:   r.instance,
		Action:              action,
		Reason:              reason,
		Regarding:           *ref,
		Related:             relatedRef,
		Note:                note,
		Type:                eventtype,
	}})
}

// remember records an Event under key and reports whether it is new (to be
// written): a repeat within seriesWindow of the last write only counts.
func (s *Sink) remember(key seriesKey, name, namespace string, now time.Time) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if sr, ok := s.series[key]; ok && now.Sub(sr.last) < seriesWindow {
		sr.count++
		sr.last = now
		return false
	}
	if len(s.series) < maxSeries {
		s.series[key] = &series{name: name, namespace: namespace, count: 1, last: now, written: now}
	}
	return true
}

// truncate cuts s to at most n bytes on a rune boundary, marking the cut.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n - len("...")
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "..."
}
