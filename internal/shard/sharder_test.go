package shard

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/skiffcd/skiff/api/v1alpha1"
	"github.com/skiffcd/skiff/internal/testcluster"
	"github.com/skiffcd/skiff/internal/testwait"
)

// The Leases' timings in these tests: short, so that handovers are quick.
const (
	testLeaseDuration = 3 * time.Second
	testRenewDeadline = 2 * time.Second
	testRetryPeriod   = 250 * time.Millisecond
)

// member is one replica's Membership and Sharder, running in a manager of
// its own until stop.
type member struct {
	*Sharder
	stop func()

	mu           sync.Mutex
	gained, lost []string
}

func startMember(t *testing.T, ns, identity string) *member {
	t.Helper()
	mgr, err := manager.New(cluster.Config, manager.Options{
		Scheme:                 testcluster.Scheme(t),
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Controller:             config.Controller{SkipNameValidation: ptr.To(true)},
	})
	if err != nil {
		t.Fatal(err)
	}
	members := &Membership{Client: mgr.GetClient(), Reader: mgr.GetAPIReader(), Namespace: ns, Identity: identity,
		LeaseDuration: testLeaseDuration, RenewDeadline: testRenewDeadline, RetryPeriod: testRetryPeriod}
	m := &member{Sharder: &Sharder{Members: members, Informers: mgr.GetCache(), Namespace: ns,
		Resolve: func(d v1alpha1.ApplicationDestination) (string, *int) { return d.Server, nil }}}
	m.Subscribe(func(gained, lost []string) {
		m.mu.Lock()
		defer m.mu.Unlock()
		m.gained = append(m.gained, gained...)
		m.lost = append(m.lost, lost...)
	})
	if err := mgr.Add(members); err != nil {
		t.Fatal(err)
	}
	if err := mgr.Add(m.Sharder); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := mgr.Start(ctx); err != nil {
			t.Errorf("manager of %s: %v", identity, err)
		}
	}()
	var once sync.Once
	m.stop = func() { once.Do(func() { cancel(); <-done }) }
	t.Cleanup(m.stop)
	return m
}

// createApps creates count Applications in ns spread over three clusters.
func createApps(t *testing.T, c client.Client, ns string, count int) []string {
	t.Helper()
	var names []string
	for i := range count {
		app := &v1alpha1.Application{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("app-%02d", i), Namespace: ns},
			Spec: v1alpha1.ApplicationSpec{Project: "default",
				Source:      &v1alpha1.ApplicationSource{RepoURL: "https://example.invalid/repo.git", Path: "."},
				Destination: v1alpha1.ApplicationDestination{Server: fmt.Sprintf("https://cluster-%d", i%3), Namespace: "default"}},
		}
		if err := c.Create(context.Background(), app); err != nil {
			t.Fatal(err)
		}
		names = append(names, app.Name)
	}
	return names
}

// ownership checks that no app is owned by two members and returns how
// many each owns and how many no one does.
func ownership(apps []string, members ...*member) (owned []int, orphans int, err error) {
	owned = make([]int, len(members))
	for _, app := range apps {
		var owners []string
		for i, m := range members {
			if m.Owns(app) {
				owned[i]++
				owners = append(owners, m.Members.Identity)
			}
		}
		switch len(owners) {
		case 0:
			orphans++
		case 1:
		default:
			return nil, 0, fmt.Errorf("%s is owned by %v at once", app, owners)
		}
	}
	return owned, orphans, nil
}

// Two replicas share the apps through their Leases: the second takes a
// share without any instant at which both act on one app, and the first
// takes everything back within a lease duration of the second's death.
func TestMembersShareTheAppsAndNeverOwnOneTogether(t *testing.T) {
	ns := cluster.Namespace(t)
	c := cluster.Client(t)
	apps := createApps(t, c, ns, 30)

	a := startMember(t, ns, "replica-a")
	testwait.Eventually(t, "replica a to own every app", func() error {
		if owned, _, _ := ownership(apps, a); owned[0] != len(apps) {
			return fmt.Errorf("a owns %d of %d", owned[0], len(apps))
		}
		return nil
	}, testwait.Timeout(30*time.Second))

	b := startMember(t, ns, "replica-b")
	// Sample ownership every few milliseconds while b joins.
	deadline := time.Now().Add(20 * time.Second)
	settled := false
	for time.Now().Before(deadline) {
		owned, orphans, err := ownership(apps, a, b)
		if err != nil {
			t.Fatal(err)
		}
		if orphans == 0 && owned[1] > 0 {
			settled = true
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	if !settled {
		owned, orphans, _ := ownership(apps, a, b)
		t.Fatalf("after b joined: a owns %d, b %d, no one %d", owned[0], owned[1], orphans)
	}
	owned, _, _ := ownership(apps, a, b)
	t.Logf("shares after b joined: a %d, b %d", owned[0], owned[1])
	a.mu.Lock()
	lost := slices.Clone(a.lost)
	a.mu.Unlock()
	b.mu.Lock()
	gained := slices.Clone(b.gained)
	b.mu.Unlock()
	slices.Sort(lost)
	slices.Sort(gained)
	if !slices.Equal(lost, gained) {
		t.Errorf("a was told it lost %v, b that it gained %v", lost, gained)
	}
	var leases coordinationv1.LeaseList
	if err := c.List(context.Background(), &leases, client.InNamespace(ns), client.MatchingLabels{MemberLabel: "true"}); err != nil {
		t.Fatal(err)
	}
	if len(leases.Items) != 2 {
		t.Errorf("%d member Leases, want one per replica", len(leases.Items))
	}

	b.stop()
	stopped := time.Now()
	testwait.Eventually(t, "replica a to take back b's apps", func() error {
		owned, _, err := ownership(apps, a)
		if err != nil {
			return err
		}
		if owned[0] != len(apps) {
			return fmt.Errorf("a owns %d of %d", owned[0], len(apps))
		}
		return nil
	}, testwait.Timeout(30*time.Second), testwait.Interval(50*time.Millisecond))
	took := time.Since(stopped)
	t.Logf("a took back b's apps %v after b stopped", took.Round(10*time.Millisecond))
	// b's Lease was renewed at most a retry period before it stopped; a
	// sees it expire at its next listing.
	if limit := testLeaseDuration + 3*testRetryPeriod + time.Second; took > limit {
		t.Errorf("a took back b's apps %v after b stopped, want within %v", took, limit)
	}
}

// A replica that stops cleanly and releases its Lease hands its apps over
// at the others' next listing, not a lease duration later.
func TestAReleasedShareIsTakenAtOnce(t *testing.T) {
	ns := cluster.Namespace(t)
	c := cluster.Client(t)
	apps := createApps(t, c, ns, 30)
	a := startMember(t, ns, "replica-a")
	b := startMember(t, ns, "replica-b")
	testwait.Eventually(t, "both replicas to hold a share", func() error {
		owned, orphans, err := ownership(apps, a, b)
		if err != nil {
			return err
		}
		if orphans > 0 || owned[0] == 0 || owned[1] == 0 {
			return fmt.Errorf("a owns %d, b %d, no one %d", owned[0], owned[1], orphans)
		}
		return nil
	}, testwait.Timeout(30*time.Second))

	b.stop()
	stopped := time.Now()
	if err := b.Members.Release(context.Background()); err != nil {
		t.Fatal(err)
	}
	testwait.Eventually(t, "replica a to take b's released apps", func() error {
		if owned, _, _ := ownership(apps, a); owned[0] != len(apps) {
			return fmt.Errorf("a owns %d of %d", owned[0], len(apps))
		}
		return nil
	}, testwait.Timeout(30*time.Second), testwait.Interval(20*time.Millisecond))
	took := time.Since(stopped)
	t.Logf("a took b's apps %v after b released its Lease", took.Round(10*time.Millisecond))
	if limit := 2*testRetryPeriod + 500*time.Millisecond; took > limit {
		t.Errorf("a took b's apps %v after b released its Lease, want within %v (the lease duration is %v)", took, limit, testLeaseDuration)
	}
	var leases coordinationv1.LeaseList
	if err := c.List(context.Background(), &leases, client.InNamespace(ns), client.MatchingLabels{MemberLabel: "true"}); err != nil {
		t.Fatal(err)
	}
	if len(leases.Items) != 1 {
		t.Errorf("%d member Leases after b released its own, want 1", len(leases.Items))
	}
}
