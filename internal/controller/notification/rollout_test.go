package notification

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/skiffcd/skiff/api/v1alpha1"
	rolloutcontroller "github.com/skiffcd/skiff/internal/controller/rollout"
	"github.com/skiffcd/skiff/internal/notify"
	"github.com/skiffcd/skiff/internal/notify/service"
	"github.com/skiffcd/skiff/internal/testcluster"
	"github.com/skiffcd/skiff/internal/testwait"
)

// startRollouts runs the Rollout controller with a RolloutNotifier reading
// its configuration from ns, until the test ends.
func startRollouts(t *testing.T, ns string) client.Client {
	t.Helper()
	return cluster.StartManager(t, func(mgr ctrl.Manager) error {
		notifier := &RolloutNotifier{Namespace: ns, Recorder: mgr.GetEventRecorder("skiff-notification-controller"),
			Retry: service.Retry{Attempts: 2, Backoff: 50 * time.Millisecond, Timeout: 5 * time.Second}}
		if err := notifier.SetupWithManager(mgr); err != nil {
			return err
		}
		r := &rolloutcontroller.Reconciler{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(),
			Recorder: mgr.GetEventRecorder("rollouts-controller"), Notifier: notifier}
		return r.SetupWithManager(mgr)
	})
}

// A blue-green Rollout subscribed, by annotation, to the catalog's
// on-rollout-completed and on-rollout-updated triggers of
// argo-rollouts-notification-configmap: its first revision completes (one
// message), an image update sends "updated" and, once promoted,
// "completed" again — each exactly once, with the Secret's token in the
// header.
func TestRolloutEventsNotifySubscribers(t *testing.T) {
	ns := cluster.Namespace(t)
	c := startRollouts(t, ns)
	type request struct{ path, body, token string }
	var mu sync.Mutex
	var requests []request
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		requests = append(requests, request{r.URL.Path, string(body), r.Header.Get("X-Token")})
		mu.Unlock()
	}))
	t.Cleanup(receiver.Close)
	ctx := context.Background()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: notify.RolloutConfigMapName, Namespace: ns},
		Data: readData(t, "rollouts-cm.yaml", map[string]string{"WEBHOOK_URL": receiver.URL})}
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: notify.RolloutSecretName, Namespace: ns},
		StringData: map[string]string{"webhook-token": "hook-secret"}}
	svc := &corev1.Service{}
	testcluster.ReadYAML(t, "testdata/rollout-service.yml", svc, ns)
	ro := &v1alpha1.Rollout{}
	testcluster.ReadYAML(t, "testdata/rollout-bg-test.yml", ro, ns)
	ro.Annotations = map[string]string{
		"notifications.argoproj.io/subscribe.on-rollout-completed.receiver": "",
		"notifications.argoproj.io/subscribe.on-rollout-updated.receiver":   "",
	}
	for _, obj := range []client.Object{cm, secret, svc, ro} {
		if err := c.Create(ctx, obj); err != nil {
			t.Fatal(err)
		}
	}
	bodies := func() []string {
		mu.Lock()
		defer mu.Unlock()
		var out []string
		for _, r := range requests {
			if r.path != "/rollouts/rollout-bg-test" || r.token != "hook-secret" {
				t.Errorf("request %+v, want path /rollouts/rollout-bg-test with the token", r)
			}
			out = append(out, r.body)
		}
		sort.Strings(out)
		return out
	}
	completed := `{"event": "completed", "phase": "Healthy"}`
	testwait.Eventually(t, "the first revision's completion", func() bool { return len(bodies()) == 1 })
	if got := bodies(); got[0] != completed {
		t.Errorf("first message %q, want %q", got[0], completed)
	}

	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		got := &v1alpha1.Rollout{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(ro), got); err != nil {
			return err
		}
		got.Spec.Template.Spec.Containers[0].Image = "nginx:stable"
		return c.Update(ctx, got)
	})
	if err != nil {
		t.Fatal(err)
	}
	testwait.Eventually(t, "the update and its completion", func() bool { return len(bodies()) == 3 })
	testwait.Consistently(t, "no more messages", 2*time.Second, func() error {
		if n := len(bodies()); n != 3 {
			return fmt.Errorf("%d messages, want 3", n)
		}
		return nil
	})
	want := []string{completed, completed, `{"event": "updated"}`}
	if got := bodies(); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("messages:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
