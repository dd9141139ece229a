package notification

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/skiffcd/skiff/api/v1alpha1"
	"github.com/skiffcd/skiff/internal/notify"
	"github.com/skiffcd/skiff/internal/notify/service"
	"github.com/skiffcd/skiff/internal/testcluster"
)

var cluster *testcluster.Cluster

func TestMain(m *testing.M) {
	os.Exit(testcluster.RunMainWithCRDs(m, func(c *testcluster.Cluster) { cluster = c }))
}

// startController runs the notification controller for ns until the test
// ends and returns a direct client and the reconciler.
func startController(t *testing.T, ns string) (client.Client, *Reconciler) {
	t.Helper()
	var r *Reconciler
	c := cluster.StartManager(t, func(mgr ctrl.Manager) error {
		r = &Reconciler{
			Client:    mgr.GetClient(),
			Namespace: ns,
			Recorder:  mgr.GetEventRecorder("skiff-notification-controller"),
			Retry:     service.Retry{Attempts: 2, Backoff: 50 * time.Millisecond, Timeout: 5 * time.Second},
		}
		return r.SetupWithManager(mgr)
	})
	return c, r
}

// slackMessage is what the fake Slack API received.
type slackMessage struct {
	Channel, Text, Authorization string
}

// fakeSlack acts as Slack's chat.postMessage API on 127.0.0.1.
type fakeSlack struct {
	URL      string
	mu       sync.Mutex
	messages []slackMessage
}

func startFakeSlack(t *testing.T) *fakeSlack {
	t.Helper()
	f := &fakeSlack{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/api/chat.postMessage" {
			http.NotFound(w, r)
			return
		}
		var body struct{ Channel, Text string }
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		f.mu.Lock()
		f.messages = append(f.messages, slackMessage{body.Channel, body.Text, r.Header.Get("Authorization")})
		f.mu.Unlock()
		_, _ = w.Write([]byte(`{"ok": true}`))
	}))
	t.Cleanup(srv.Close)
	f.URL = srv.URL + "/api"
	return f
}

// matching returns the messages whose text contains substr.
func (f *fakeSlack) matching(substr string) []slackMessage {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []slackMessage
	for _, m := range f.messages {
		if strings.Contains(m.Text, substr) {
			out = append(out, m)
		}
	}
	return out
}

// readData reads a testdata YAML map, replacing each ${NAME} with vars[NAME].
func readData(t *testing.T, name string, vars map[string]string) map[string]string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	text := string(raw)
	for k, v := range vars {
		text = strings.ReplaceAll(text, "${"+k+"}", v)
	}
	out := map[string]string{}
	if err := yaml.Unmarshal([]byte(text), &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// applyConfig creates or replaces the ConfigMap and the Secret.
func applyConfig(t *testing.T, c client.Client, ns string, cmData, secretData map[string]string) {
	t.Helper()
	ctx := context.Background()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: notify.ConfigMapName, Namespace: ns}}
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: notify.SecretName, Namespace: ns}}
	for _, obj := range []client.Object{cm, secret} {
		err := c.Get(ctx, client.ObjectKeyFromObject(obj), obj)
		if err != nil && !apierrors.IsNotFound(err) {
			t.Fatal(err)
		}
		cm.Data = cmData
		secret.Data = nil
		secret.StringData = secretData
		if apierrors.IsNotFound(err) {
			err = c.Create(ctx, obj)
		} else {
			err = c.Update(ctx, obj)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

func createApp(t *testing.T, c client.Client, ns, name string, annotations map[string]string) *v1alpha1.Application {
	t.Helper()
	app := &v1alpha1.Application{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Annotations: annotations},
		Spec: v1alpha1.ApplicationSpec{
			Project:     "default",
			Source:      &v1alpha1.ApplicationSource{RepoURL: "https://example.com/repo.git", Path: "guestbook", TargetRevision: "HEAD"},
			Destination: v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: ns},
		},
	}
	if err := c.Create(context.Background(), app); err != nil {
		t.Fatal(err)
	}
	return app
}

// updateApp rereads the app and applies change, retrying on conflicts (the
// controller patches the notified annotation concurrently). The CRD has no
// status subresource, so a plain update writes status.
func updateApp(t *testing.T, c client.Client, app *v1alpha1.Application, change func(*v1alpha1.Application)) {
	t.Helper()
	for range 50 {
		if err := c.Get(context.Background(), client.ObjectKeyFromObject(app), app); err != nil {
			t.Fatal(err)
		}
		change(app)
		err := c.Update(context.Background(), app)
		if err == nil {
			return
		}
		if !apierrors.IsConflict(err) {
			t.Fatal(err)
		}
	}
	t.Fatal("too many conflicts updating the application")
}

// synced is the status Argo CD writes after a successful sync to revision.
func synced(revision string, started time.Time, health v1alpha1.HealthStatusCode) func(*v1alpha1.Application) {
	return func(app *v1alpha1.Application) {
		finished := metav1.NewTime(started.Add(time.Second))
		app.Status.Sync = v1alpha1.SyncStatus{Status: v1alpha1.SyncStatusCodeSynced, Revision: revision}
		app.Status.Health = v1alpha1.HealthStatus{Status: health}
		app.Status.OperationState = &v1alpha1.OperationState{
			Phase:      v1alpha1.OperationSucceeded,
			Message:    "successfully synced",
			StartedAt:  metav1.NewTime(started),
			FinishedAt: &finished,
			SyncResult: &v1alpha1.SyncOperationResult{Revision: revision},
		}
	}
}

// eventsAbout returns the Events about the named object with reason.
func eventsAbout(t *testing.T, c client.Client, ns, object, reason string) []corev1.Event {
	t.Helper()
	var list corev1.EventList
	if err := c.List(context.Background(), &list, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	var out []corev1.Event
	for _, e := range list.Items {
		if e.InvolvedObject.Name == object && e.Reason == reason {
			out = append(out, e)
		}
	}
	return out
}
