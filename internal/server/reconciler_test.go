package server

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/skiffcd/skiff/api/v1alpha1"
	"github.com/skiffcd/skiff/internal/clustercache"
	"github.com/skiffcd/skiff/internal/controller/application"
	"github.com/skiffcd/skiff/internal/health"
	"github.com/skiffcd/skiff/internal/reposerver"
	"github.com/skiffcd/skiff/internal/syncengine"
	"github.com/skiffcd/skiff/internal/testcluster"
	"github.com/skiffcd/skiff/internal/testgit"
	"github.com/skiffcd/skiff/internal/testwait"
)

// configMapAt is a ConfigMap manifest with the given value, for a commit.
func configMapAt(value string) map[string]string {
	return map[string]string{"app/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n  value: " + value + "\n"}
}

// TestGitHubPushRefreshesThroughTheApplicationController runs the real
// Application controller with a poll period far longer than the test: only
// the webhook can make it see the new commit.
func TestGitHubPushRefreshesThroughTheApplicationController(t *testing.T) {
	ns := cluster.Namespace(t)
	scheme := testcluster.Scheme(t)
	mgr, err := ctrl.NewManager(cluster.Config, ctrl.Options{
		Scheme:                 scheme,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Controller:             config.Controller{SkipNameValidation: ptr.To(true)},
	})
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	live, err := clustercache.New(cluster.Config, clustercache.Options{})
	if err != nil {
		t.Fatal(err)
	}
	direct, err := client.New(cluster.Config, client.Options{Scheme: scheme, Mapper: mgr.GetRESTMapper()})
	if err != nil {
		t.Fatal(err)
	}
	repoServer, err := reposerver.NewInDir(tmp, reposerver.Options{})
	if err != nil {
		t.Fatal(err)
	}
	r := &application.Reconciler{
		Client:    mgr.GetClient(),
		APIReader: mgr.GetAPIReader(),
		Namespace: ns,
		Repo:      repoServer,
		Cache:     live,
		Engine: &syncengine.Engine{Client: direct, Poll: 100 * time.Millisecond, WaveTimeout: time.Minute,
			Health: func(u *unstructured.Unstructured) (v1alpha1.HealthStatusCode, string) {
				res := health.Assess(u)
				return res.Status, res.Message
			}},
		RefreshPeriod: time.Hour,
	}
	if err := r.SetupWithManager(mgr); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refresher := &recordingRefresher{next: &AnnotationRefresher{Client: direct, Namespace: ns, Forget: repoServer.Forget}}
	if err := mgr.Add(&Server{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Settings: direct, Namespace: ns,
		Refresher: refresher, Options: Options{Listener: ln, Insecure: true}}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{}, 2)
	t.Cleanup(func() { cancel(); <-done; <-done })
	go func() { defer func() { done <- struct{}{} }(); _ = live.Start(ctx) }()
	go func() {
		defer func() { done <- struct{}{} }()
		if err := mgr.Start(ctx); err != nil {
			t.Errorf("manager: %v", err)
		}
	}()

	repo := testgit.New(t)
	first := repo.Commit(configMapAt("one"))
	h := &harness{t: t, ns: ns, url: "http://" + ln.Addr().String(), k8s: direct, refresh: refresher}
	h.http = (&http.Client{Timeout: 10 * time.Second})
	h.waitInitialPassword()
	h.setSecretKey(keyGitHubSecret, "gh-secret")
	h.createApp("guestbook", "default", nil, v1alpha1.ApplicationSource{RepoURL: repo.URL(), Path: "app", TargetRevision: "HEAD"})

	revisionIs := func(want string) func() error {
		return func() error {
			if got := h.getApp("guestbook").Status.Sync.Revision; got != want {
				return fmt.Errorf("sync revision %q, want %q", got, want)
			}
			return nil
		}
	}
	testwait.Eventually(t, "the first commit resolved", revisionIs(first))

	second := repo.Commit(configMapAt("two"))
	// Without a webhook the controller keeps the resolved revision (its
	// poll is an hour away).
	testwait.Consistently(t, "the revision before the webhook", time.Second, revisionIs(first))
	body := []byte(`{"ref":"refs/heads/master","repository":{"html_url":"` + repo.URL() + `","default_branch":"master"}}`)
	r2 := h.do(http.MethodPost, "/api/webhook", "", body, "X-GitHub-Event", "push", "X-Hub-Signature-256", "sha256="+sign("gh-secret", body))
	if r2.status != http.StatusOK {
		t.Fatalf("push: %d %s", r2.status, r2.body)
	}
	testwait.Eventually(t, "the pushed commit resolved", revisionIs(second))
}
