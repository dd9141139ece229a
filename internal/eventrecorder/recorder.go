// Package eventrecorder writes Kubernetes Events (events.k8s.io/v1) the way
// Argo CD writes its own: each call is one Event, created in the background,
// and nothing is kept once it is written. client-go's broadcaster keeps every
// Event it wrote for six minutes, to fold repeats into a series; with
// hundreds of apps syncing, whose events name the revision and so never
// repeat, that cache grew with every commit.
package eventrecorder

import (
	"context"
	"fmt"
	"os"
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
)

const (
	// queueSize bounds the Events waiting to be written; beyond it new ones
	// are dropped, as client-go's broadcaster drops them.
	queueSize = 1000
	// writers write Events concurrently, so a burst (every app syncing
	// after one commit) is not written one round trip at a time.
	writers = 4
	// maxNoteBytes is the API's limit on an Event's note.
	maxNoteBytes = 1024
)

// Sink writes the Events its recorders are given. Start runs it.
type Sink struct {
	client client.Client
	scheme *runtime.Scheme
	queue  chan *eventsv1.Event
	now    func() time.Time
}

// NewSink returns a Sink that writes Events with c; scheme resolves the
// kinds of the objects events are about.
func NewSink(c client.Client, scheme *runtime.Scheme) *Sink {
	return &Sink{client: c, scheme: scheme, queue: make(chan *eventsv1.Event, queueSize), now: time.Now}
}

// Start writes queued Events until ctx ends; those still queued then are
// dropped. It is a manager.Runnable.
func (s *Sink) Start(ctx context.Context) error {
	done := make(chan struct{})
	for range writers {
		go func() {
			defer func() { done <- struct{}{} }()
			for {
				select {
				case <-ctx.Done():
					return
				case ev := <-s.queue:
					s.write(ctx, ev)
				}
			}
		}()
	}
	for range writers {
		<-done
	}
	return nil
}

// NeedLeaderElection is false: a standby replica's controllers record
// nothing, and the leader's Events must not wait for an election.
func (s *Sink) NeedLeaderElection() bool { return false }

func (s *Sink) write(ctx context.Context, ev *eventsv1.Event) {
	err := s.client.Create(ctx, ev)
	if err != nil && !apierrors.IsAlreadyExists(err) && ctx.Err() == nil {
		// An Event is best effort: the caller has moved on.
		logf.FromContext(ctx).Info("could not write Event", "reason", ev.Reason, "regarding", ev.Regarding.Name, "error", err.Error())
	}
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

// Eventf queues an Event about regarding. It never blocks: when the queue
// is full the Event is dropped.
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
	now := r.sink.now()
	namespace := ref.Namespace
	if namespace == "" {
		namespace = metav1.NamespaceDefault
	}
	ev := &eventsv1.Event{
		ObjectMeta: metav1.ObjectMeta{
			Name:      fmt.Sprintf("%s.%x", ref.Name, now.UnixNano()),
			Namespace: namespace,
		},
		EventTime:           metav1.NewMicroTime(now),
		ReportingController: r.controller,
		ReportingInstance:   r.instance,
		Action:              action,
		Reason:              reason,
		Regarding:           *ref,
		Related:             relatedRef,
		Note:                truncate(fmt.Sprintf(note, args...), maxNoteBytes),
		Type:                eventtype,
	}
	select {
	case r.sink.queue <- ev:
	default:
	}
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
