package shard

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/skiffcd/skiff/api/v1alpha1"
)

// fakeClock is a clock the test moves.
type fakeClock struct{ now time.Time }

func (c *fakeClock) Now() time.Time { return c.now }

// sharderFor is replica self's Sharder over apps, with a membership whose
// view the test sets (setView) instead of Leases.
func sharderFor(self string, clock *fakeClock, apps ...string) *Sharder {
	s := &Sharder{
		Members: &Membership{Identity: self, Now: clock.Now, RetryPeriod: time.Second,
			LeaseDuration: 15 * time.Second, RenewDeadline: 10 * time.Second},
		Resolve: func(d v1alpha1.ApplicationDestination) (string, *int) { return d.Server, nil },
		Now:     clock.Now,
		dests:   map[string]v1alpha1.ApplicationDestination{},
	}
	for _, app := range apps {
		s.dests[app] = v1alpha1.ApplicationDestination{Server: "https://" + app}
	}
	return s
}

func setView(s *Sharder, members ...string) {
	m := s.Members
	m.mu.Lock()
	defer m.mu.Unlock()
	m.members, m.renewed = slices.Sorted(slices.Values(members)), m.now()
}

// owned lists the apps s acts on now.
func owned(s *Sharder, apps []string) []string {
	var out []string
	for _, app := range apps {
		if s.Owns(app) {
			out = append(out, app)
		}
	}
	return out
}

// The fence of a handover: what a replica gains from a live member waits
// HandoverDelay, what it gains from a member gone or a new app does not,
// and what it loses stops at once.
func TestHandovers(t *testing.T) {
	clock := &fakeClock{now: time.Unix(1_000_000, 0)}
	apps := []string{"a1", "a2", "a3", "a4", "a5", "a6"}
	s := sharderFor("b", clock, apps...)
	var gained, lost []string
	s.Subscribe(func(g, l []string) { gained, lost = append(gained, g...), append(lost, l...) })
	delay := s.handoverDelay()

	// Alone, b acts on every app at once.
	setView(s, "b")
	s.assign()
	if got := owned(s, apps); len(got) != len(apps) {
		t.Fatalf("alone, b owns %v", got)
	}
	gained = nil

	// a joins: b lets go of a's share at once.
	setView(s, "a", "b")
	s.assign()
	aShare := Assign([]string{"a", "b"}, appsOf(s))
	var toA []string
	for _, app := range apps {
		if aShare[app] == "a" {
			toA = append(toA, app)
		}
	}
	if len(toA) == 0 {
		t.Fatal("a joined and took nothing: the test needs an app that moves")
	}
	if !slices.Equal(lost, toA) {
		t.Errorf("b was told it lost %v, want %v", lost, toA)
	}
	for _, app := range toA {
		if s.Owns(app) {
			t.Errorf("b still acts on %s after a took it", app)
		}
	}

	// a dies (its Lease ran out): b takes its apps back at once.
	lost = nil
	setView(s, "b")
	s.assign()
	if got := owned(s, apps); len(got) != len(apps) {
		t.Errorf("after a died, b owns %v, want every app at once", got)
	}
	if !slices.Equal(gained, toA) {
		t.Errorf("b was told it gained %v, want %v", gained, toA)
	}

	// a comes back; then new apps come, and even the shares out: apps that
	// move from a, alive, to b wait the handover, the new ones do not.
	setView(s, "a", "b")
	s.assign()
	gained = nil
	before := Assign([]string{"a", "b"}, appsOf(s))
	var fromLive, added []string
	for i := 0; len(fromLive) == 0 && i < 100; i++ {
		name := fmt.Sprintf("new-%d", i)
		added = append(added, name)
		s.dests[name] = v1alpha1.ApplicationDestination{Server: "https://big"}
		for app, m := range Assign([]string{"a", "b"}, appsOf(s)) {
			if m == "b" && before[app] == "a" {
				fromLive = append(fromLive, app)
			}
		}
	}
	next := s.assign()
	after := Assign([]string{"a", "b"}, appsOf(s))
	if len(fromLive) == 0 {
		t.Fatal("no app moved from a to b: the test needs one")
	}
	for _, app := range fromLive {
		if s.Owns(app) {
			t.Errorf("b acts on %s at once, which a (alive) owned: want it to wait %v", app, delay)
		}
	}
	for _, app := range added {
		if after[app] == "b" && !s.Owns(app) {
			t.Errorf("b waits to act on the new app %s", app)
		}
	}
	if len(fromLive) > 0 && next > delay {
		t.Errorf("the next assignment is in %v, want within the handover delay %v", next, delay)
	}
	clock.now = clock.now.Add(delay)
	s.assign()
	for _, app := range fromLive {
		if !s.Owns(app) {
			t.Errorf("b does not act on %s after the handover delay", app)
		}
		if !slices.Contains(gained, app) {
			t.Errorf("b was not told it gained %s", app)
		}
	}

	// b cannot renew its Lease: it acts on nothing.
	lost = nil
	clock.now = clock.now.Add(11 * time.Second)
	s.assign()
	if got := owned(s, apps); len(got) != 0 {
		t.Errorf("past its renew deadline b still owns %v", got)
	}
	if len(lost) == 0 {
		t.Error("b was not told it lost its apps when it lost its standing")
	}
}

func appsOf(s *Sharder) []App {
	var apps []App
	for name, d := range s.dests {
		apps = append(apps, App{Name: name, Cluster: d.Server})
	}
	return apps
}

// A replica's standing can lapse between two renewals (a slow one under
// load): an assignment then finds no view and lets every app go. When the
// next renewal brings the standing back, the membership tells its
// subscribers although the view is the one it last told, the replica
// assigns again and takes its apps back after the handover delay.
func TestAReplicaWhoseStandingLapsedTakesItsAppsBack(t *testing.T) {
	clock, apps, s, share := sharderWithShare(t)
	told := 0
	s.Members.Subscribe(func() { told++ })

	// The standing lapses: no renewal for longer than the renew deadline.
	clock.now = clock.now.Add(s.Members.renewDeadline() + time.Second)
	next := s.assign()
	if got := owned(s, apps); len(got) != 0 {
		t.Fatalf("b still owns %v with its standing lapsed", got)
	}
	if next > s.Members.RetryPeriodOrDefault() {
		t.Errorf("with its standing lapsed, b assigns again in %v, want within a retry period", next)
	}

	// The next renewal: the same view as last told, but a reader saw the lapse.
	told = 0
	setView(s, "a", "b")
	s.Members.tell()
	if told != 1 {
		t.Fatalf("the renewal after a lapse told the subscribers %d times, want once", told)
	}
	s.assign()
	clock.now = clock.now.Add(s.handoverDelay())
	s.assign()
	if got := owned(s, apps); !slices.Equal(got, share) {
		t.Errorf("after its standing came back, b owns %v, want %v", got, share)
	}

	// Renewals that change nothing tell nobody.
	told = 0
	setView(s, "a", "b")
	s.Members.tell()
	if told != 0 {
		t.Errorf("a renewal that changed nothing told the subscribers %d times", told)
	}
}

// A lapse only Owns sees (no assignment ran in it): the controllers'
// work on the apps was refused meanwhile and dropped, so when the standing
// comes back the membership tells its subscribers and the replica
// announces every app it owns again, for its work to be queued again.
func TestALapseOnlyOwnsSawAnnouncesTheShareAgain(t *testing.T) {
	clock, apps, s, share := sharderWithShare(t)
	told := 0
	s.Members.Subscribe(func() { told++ })
	var gained []string
	s.Subscribe(func(g, _ []string) { gained = append(gained, g...) })

	clock.now = clock.now.Add(s.Members.renewDeadline() + time.Second)
	if got := owned(s, apps); len(got) != 0 {
		t.Fatalf("b acts on %v with its standing lapsed", got)
	}
	told, gained = 0, nil
	setView(s, "a", "b")
	s.Members.tell()
	if told != 1 {
		t.Fatalf("the renewal after a lapse Owns saw told the subscribers %d times, want once", told)
	}
	s.assign()
	slices.Sort(gained)
	if !slices.Equal(gained, share) {
		t.Errorf("after the lapse b announced %v again, want its whole share %v", gained, share)
	}
	if got := owned(s, apps); !slices.Equal(got, share) {
		t.Errorf("after the lapse b acts on %v, want %v at once", got, share)
	}

	// With no lapse since, an assignment announces nothing again.
	gained = nil
	s.assign()
	if len(gained) != 0 {
		t.Errorf("an assignment without a lapse announced %v again", gained)
	}
}

// sharderWithShare is replica b's Sharder over six apps, sharing them with
// a live member a, past the handover delay: b acts on its share.
func sharderWithShare(t *testing.T) (*fakeClock, []string, *Sharder, []string) {
	t.Helper()
	clock := &fakeClock{now: time.Unix(1_000_000, 0)}
	apps := []string{"a1", "a2", "a3", "a4", "a5", "a6"}
	s := sharderFor("b", clock, apps...)
	setView(s, "a", "b")
	s.Members.tell()
	s.assign()
	clock.now = clock.now.Add(s.handoverDelay())
	s.assign()
	share := owned(s, apps)
	if len(share) == 0 {
		t.Fatal("b owns nothing of six apps with a: the test needs a share")
	}
	return clock, apps, s, share
}
