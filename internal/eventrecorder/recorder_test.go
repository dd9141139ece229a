package eventrecorder

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/skiffcd/skiff/internal/testwait"
)

// An Event carries what `kubectl get events` and Argo CD's UI read: the
// object, reason, action, note, type and reporting controller. A repeat
// within the series window is folded into the first Event's series
// (written by the periodic flush); one after it is a new Event.
func TestEventsAreWrittenAndRepeatsFolded(t *testing.T) {
	ns := cluster.Namespace(t)
	c, err := client.New(cluster.Config, client.Options{Scheme: clientgoscheme.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "guestbook", Namespace: ns}}
	if err := c.Create(context.Background(), cm); err != nil {
		t.Fatal(err)
	}
	sink := NewSink(c, clientgoscheme.Scheme)
	clock := time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)
	sink.Now = func() time.Time { return clock }
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan struct{})
	go func() { _ = sink.Start(ctx); close(stopped) }()
	t.Cleanup(func() { cancel(); <-stopped })

	rec := sink.Recorder("skiff-application-controller")
	started := func() {
		rec.Eventf(cm, nil, corev1.EventTypeNormal, "OperationStarted", "Sync", "Initiated sync to %s", "HEAD")
	}
	started()
	clock = clock.Add(time.Minute)
	started()
	rec.Eventf(cm, nil, corev1.EventTypeWarning, "OperationCompleted", "Sync", "%s", strings.Repeat("é", 700))
	rec.Eventf(cm, nil, "Bogus", "Ignored", "Sync", "an unknown type is not written")
	waitEvents(t, c, ns, 2)
	clock = clock.Add(time.Minute)
	sink.flushSeries()
	clock = clock.Add(seriesWindow)
	started() // after the window: a new Event
	list := waitEvents(t, c, ns, 3)

	var startedEvents []eventsv1.Event
	for _, ev := range list {
		if ev.Regarding.Kind != "ConfigMap" || ev.Regarding.Name != "guestbook" || ev.Regarding.UID != cm.UID {
			t.Errorf("Event %s regards %+v, want the ConfigMap", ev.Name, ev.Regarding)
		}
		if ev.ReportingController != "skiff-application-controller" || !strings.HasPrefix(ev.ReportingInstance, "skiff-application-controller") {
			t.Errorf("Event %s reported by %q/%q", ev.Name, ev.ReportingController, ev.ReportingInstance)
		}
		switch ev.Reason {
		case "OperationStarted":
			startedEvents = append(startedEvents, ev)
			if ev.Note != "Initiated sync to HEAD" || ev.Type != corev1.EventTypeNormal || ev.Action != "Sync" {
				t.Errorf("OperationStarted Event: note %q type %q action %q", ev.Note, ev.Type, ev.Action)
			}
		case "OperationCompleted":
			if len(ev.Note) > maxNoteBytes || !strings.HasSuffix(ev.Note, "...") || ev.Type != corev1.EventTypeWarning {
				t.Errorf("long note kept %d bytes (limit %d), type %q", len(ev.Note), maxNoteBytes, ev.Type)
			}
		default:
			t.Errorf("unexpected Event reason %q", ev.Reason)
		}
	}
	if len(startedEvents) != 2 {
		t.Fatalf("%d OperationStarted Events, want 2 (a repeat, then one after the window)", len(startedEvents))
	}
	testwait.Eventually(t, "the first OperationStarted Event's series to count 2", func() error {
		var first eventsv1.Event
		if err := c.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: olderOf(startedEvents).Name}, &first); err != nil {
			return err
		}
		if first.Series == nil || first.Series.Count != 2 {
			return fmt.Errorf("series %+v", first.Series)
		}
		return nil
	})
}

func olderOf(evs []eventsv1.Event) eventsv1.Event {
	if evs[1].EventTime.Before(&evs[0].EventTime) {
		return evs[1]
	}
	return evs[0]
}

// waitEvents waits until ns has want Events and returns them.
func waitEvents(t *testing.T, c client.Client, ns string, want int) []eventsv1.Event {
	t.Helper()
	var list eventsv1.EventList
	testwait.Eventually(t, fmt.Sprintf("%d Events", want), func() error {
		if err := c.List(context.Background(), &list, client.InNamespace(ns)); err != nil {
			return err
		}
		if len(list.Items) < want {
			return fmt.Errorf("%d Events written", len(list.Items))
		}
		return nil
	})
	if len(list.Items) != want {
		t.Fatalf("%d Events written, want %d: %+v", len(list.Items), want, list.Items)
	}
	return list.Items
}
