package application

import (
	"context"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/skiffcd/skiff/api/v1alpha1"
	"github.com/skiffcd/skiff/internal/testgit"
	"github.com/skiffcd/skiff/internal/testwait"
)

// oneShard is a replica's share that the test takes away by hand.
type oneShard struct {
	owned atomic.Bool
	mu    sync.Mutex
	subs  []func(gained, lost []string)
}

func (s *oneShard) Owns(string) bool { return s.owned.Load() }

func (s *oneShard) Subscribe(fn func(gained, lost []string)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.subs = append(s.subs, fn)
}

func (s *oneShard) lose(apps ...string) {
	s.owned.Store(false)
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, fn := range s.subs {
		fn(nil, apps)
	}
}

// An app another replica takes over while this one compares it: the
// comparison stops and writes nothing, so the two never both write its
// status (or start an auto-sync).
func TestAComparisonOfALostAppWritesNothing(t *testing.T) {
	ns := cluster.Namespace(t)
	shards := &oneShard{}
	shards.owned.Store(true)
	c, r := startReconciler(t, ns, time.Hour, func(r *Reconciler) { r.Shards = shards })

	slow, err := os.ReadFile("testdata/slow-render/cm.jsonnet")
	if err != nil {
		t.Fatal(err)
	}
	repo := testgit.New(t)
	repo.Commit(map[string]string{"app/cm.jsonnet": string(slow)})
	app := &v1alpha1.Application{
		ObjectMeta: metav1.ObjectMeta{Name: "lost", Namespace: ns},
		Spec: v1alpha1.ApplicationSpec{
			Project:     "default",
			Source:      &v1alpha1.ApplicationSource{RepoURL: repo.URL(), Path: "app", TargetRevision: "HEAD"},
			Destination: v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: ns},
			SyncPolicy:  &v1alpha1.SyncPolicy{Automated: &v1alpha1.SyncPolicyAutomated{}},
		},
	}
	if err := c.Create(context.Background(), app); err != nil {
		t.Fatal(err)
	}
	comparing := func() bool { _, ok := r.comparing.Load(app.Name); return ok }
	testwait.Eventually(t, "the comparison to begin", func() error {
		if !comparing() {
			return fmt.Errorf("not comparing %s", app.Name)
		}
		return nil
	}, testwait.Timeout(30*time.Second), testwait.Interval(5*time.Millisecond))
	shards.lose(app.Name)
	lostAt := time.Now()
	testwait.Eventually(t, "the comparison to end", func() error {
		if comparing() {
			return fmt.Errorf("still comparing %s", app.Name)
		}
		return nil
	}, testwait.Timeout(60*time.Second), testwait.Interval(10*time.Millisecond))
	t.Logf("the comparison ended %v after the app was lost", time.Since(lostAt).Round(10*time.Millisecond))
	got := &v1alpha1.Application{}
	if err := c.Get(context.Background(), client.ObjectKeyFromObject(app), got); err != nil {
		t.Fatal(err)
	}
	if got.Status.Sync.Status != "" || got.Status.ReconciledAt != nil || got.Operation != nil {
		t.Errorf("the lost app's status was written: sync %q, reconciled at %v, operation %+v", got.Status.Sync.Status, got.Status.ReconciledAt, got.Operation)
	}
}
