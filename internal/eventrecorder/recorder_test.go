package eventrecorder

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Each call writes one Event with what `kubectl get events` and Argo CD's
// UI read: the object, reason, action, note, type and reporting controller.
// A repeated call is a second Event, not a series kept in memory.
func TestEventsAreWrittenOneByOne(t *testing.T) {
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
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan struct{})
	go func() { _ = sink.Start(ctx); close(stopped) }()
	t.Cleanup(func() { cancel(); <-stopped })

	rec := sink.Recorder("skiff-application-controller")
	rec.Eventf(cm, nil, corev1.EventTypeNormal, "OperationStarted", "Sync", "Initiated sync to %s", "HEAD")
	rec.Eventf(cm, nil, corev1.EventTypeNormal, "OperationStarted", "Sync", "Initiated sync to %s", "HEAD")
	rec.Eventf(cm, nil, corev1.EventTypeWarning, "OperationCompleted", "Sync", "%s", strings.Repeat("é", 700))
	rec.Eventf(cm, nil, "Bogus", "Ignored", "Sync", "an unknown type is not written")

	var list eventsv1.EventList
	deadline := time.Now().Add(30 * time.Second)
	for {
		if err := c.List(context.Background(), &list, client.InNamespace(ns)); err != nil {
			t.Fatal(err)
		}
		if len(list.Items) >= 3 || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if len(list.Items) != 3 {
		t.Fatalf("%d Events written, want 3: %+v", len(list.Items), list.Items)
	}
	started := 0
	for _, ev := range list.Items {
		if ev.Regarding.Kind != "ConfigMap" || ev.Regarding.Name != "guestbook" || ev.Regarding.UID != cm.UID {
			t.Errorf("Event %s regards %+v, want the ConfigMap", ev.Name, ev.Regarding)
		}
		if ev.ReportingController != "skiff-application-controller" || !strings.HasPrefix(ev.ReportingInstance, "skiff-application-controller") {
			t.Errorf("Event %s reported by %q/%q", ev.Name, ev.ReportingController, ev.ReportingInstance)
		}
		switch ev.Reason {
		case "OperationStarted":
			started++
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
	if started != 2 {
		t.Errorf("%d OperationStarted Events, want 2 (one per call)", started)
	}
}
