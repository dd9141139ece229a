package shard

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"k8s.io/client-go/tools/cache"
	ctrlcache "sigs.k8s.io/controller-runtime/pkg/cache"

	"github.com/skiffcd/skiff/api/v1alpha1"
)

// debounce gathers the changes that arrive together (the first listing of
// thousands of Applications) into one assignment.
const debounce = 50 * time.Millisecond

// Sharder tells the Application controller which apps this replica owns.
// It follows the Applications (their destinations), the cluster Secrets
// (through Resolve and Changed) and the live members, and assigns again
// when any changes.
//
// An app that changes hands is let go at once by the replica that loses it
// and taken up HandoverDelay later by the one that gains it, when the
// previous owner is still a live member: every member sees a change of
// members or apps within a RetryPeriod, so the two never act on it at
// once. An app whose previous owner is gone (its Lease expired) is taken
// up at once, as is a new app.
type Sharder struct {
	// Members is the live membership.
	Members *Membership
	// Resolve finds the cluster an app deploys to ("" when unknown) and
	// that cluster's shard key.
	Resolve func(v1alpha1.ApplicationDestination) (cluster string, pin *int)
	// Informers holds the Applications' informer; Namespace is theirs.
	Informers ctrlcache.Informers
	Namespace string
	// HandoverDelay is how long an app taken from a live member waits;
	// zero means two retry periods plus one second.
	HandoverDelay time.Duration
	// Now is the clock; nil means time.Now.
	Now func() time.Time

	mu    sync.Mutex
	dests map[string]v1alpha1.ApplicationDestination
	// owner is the last assignment; nil before the first one and after
	// this replica lost its standing.
	owner map[string]string
	// since holds the apps this replica owns and when it may act on each.
	since map[string]time.Time
	// announced holds the owned apps the subscribers were told of.
	announced map[string]bool
	// lapsesHandled is Members.Lapses() at the last assignment that had
	// a view.
	lapsesHandled uint64
	subs          []func(gained, lost []string)
	kick          chan struct{}
}

func (s *Sharder) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

func (s *Sharder) handoverDelay() time.Duration {
	if s.HandoverDelay > 0 {
		return s.HandoverDelay
	}
	return 2*s.Members.RetryPeriodOrDefault() + time.Second
}

// Owns reports whether this replica acts on the app named app now.
func (s *Sharder) Owns(app string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	at, ok := s.since[app]
	return ok && !s.now().Before(at) && s.Members.Standing()
}

// Owned returns the apps this replica acts on now, in name order.
func (s *Sharder) Owned() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	var apps []string
	for app, at := range s.since {
		if !now.Before(at) {
			apps = append(apps, app)
		}
	}
	slices.Sort(apps)
	return apps
}

// Subscribe calls fn with the apps this replica may act on from now
// (gained) and those it must stop acting on (lost).
func (s *Sharder) Subscribe(fn func(gained, lost []string)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.subs = append(s.subs, fn)
}

// Changed asks for a new assignment: a cluster Secret changed.
func (s *Sharder) Changed() {
	s.mu.Lock()
	kick := s.kick
	s.mu.Unlock()
	if kick == nil {
		return
	}
	select {
	case kick <- struct{}{}:
	default:
	}
}

// NeedLeaderElection implements manager.LeaderElectionRunnable: every
// replica assigns.
func (*Sharder) NeedLeaderElection() bool { return false }

// Start follows the Applications and the members until ctx ends.
func (s *Sharder) Start(ctx context.Context) error {
	s.mu.Lock()
	s.kick = make(chan struct{}, 1)
	s.dests = map[string]v1alpha1.ApplicationDestination{}
	s.mu.Unlock()
	inf, err := s.Informers.GetInformer(ctx, &v1alpha1.Application{})
	if err != nil {
		return fmt.Errorf("following the Applications: %w", err)
	}
	if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(o any) { s.track(o) },
		UpdateFunc: func(_, o any) { s.track(o) },
		DeleteFunc: s.untrack,
	}); err != nil {
		return fmt.Errorf("following the Applications: %w", err)
	}
	s.Members.Subscribe(s.Changed)
	if !cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
		return nil
	}
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-s.kick:
			// Let the changes that come with this one arrive.
			select {
			case <-ctx.Done():
				return nil
			case <-time.After(debounce):
			}
		case <-timer.C:
		}
		next := s.assign()
		timer.Reset(next)
	}
}

func (s *Sharder) track(o any) {
	app, ok := o.(*v1alpha1.Application)
	if !ok || app.Namespace != s.Namespace {
		return
	}
	s.mu.Lock()
	prev, known := s.dests[app.Name]
	s.dests[app.Name] = app.Spec.Destination
	s.mu.Unlock()
	if !known || prev != app.Spec.Destination {
		s.Changed()
	}
}

func (s *Sharder) untrack(o any) {
	if tomb, ok := o.(cache.DeletedFinalStateUnknown); ok {
		o = tomb.Obj
	}
	app, ok := o.(*v1alpha1.Application)
	if !ok || app.Namespace != s.Namespace {
		return
	}
	s.mu.Lock()
	delete(s.dests, app.Name)
	s.mu.Unlock()
	s.Changed()
}

// assign computes the assignment, tells the subscribers what this replica
// gained and lost, and returns how long until an app taken over may be
// acted on (an hour when none waits).
func (s *Sharder) assign() time.Duration {
	members, ok := s.Members.View()
	lapses := s.Members.Lapses()
	s.mu.Lock()
	// After a lapse of this replica's standing, whatever was asked of its
	// apps meanwhile was refused (Owns was false) and dropped: every app it
	// owns is announced again, so that its comparisons and operation checks
	// are queued again.
	reannounce := ok && lapses != s.lapsesHandled
	if ok {
		s.lapsesHandled = lapses
	}
	apps := make([]App, 0, len(s.dests))
	for name, dest := range s.dests {
		cluster, pin := s.Resolve(dest)
		apps = append(apps, App{Name: name, Cluster: cluster, Pin: pin})
	}
	now := s.now()
	self := s.Members.Identity
	var owner map[string]string
	if ok && slices.Contains(members, self) {
		owner = Assign(members, apps)
	}
	if s.since == nil {
		s.since, s.announced = map[string]time.Time{}, map[string]bool{}
	}
	live := map[string]bool{}
	for _, m := range members {
		live[m] = true
	}
	var lost, gained []string
	for app := range s.since {
		if owner[app] != self {
			delete(s.since, app)
			if s.announced[app] {
				lost = append(lost, app)
			}
			delete(s.announced, app)
		}
	}
	next := time.Hour
	for app, m := range owner {
		if m != self {
			continue
		}
		if _, have := s.since[app]; !have {
			s.since[app] = now.Add(s.takeOverDelay(app, members, live))
		}
		switch at := s.since[app]; {
		case s.announced[app] && reannounce:
			gained = append(gained, app)
		case s.announced[app]:
		case !now.Before(at):
			s.announced[app] = true
			gained = append(gained, app)
		default:
			next = min(next, at.Sub(now))
		}
	}
	if owner == nil {
		// This replica's standing lapsed: the tick that renews it tells
		// the membership's subscribers, and this asks again meanwhile.
		next = s.Members.RetryPeriodOrDefault()
	}
	s.owner = owner
	subs := slices.Clone(s.subs)
	s.mu.Unlock()
	slices.Sort(gained)
	slices.Sort(lost)
	if len(gained)+len(lost) > 0 {
		for _, fn := range subs {
			fn(gained, lost)
		}
	}
	return next
}

// takeOverDelay is how long this replica waits before acting on app,
// which it did not own: none when no other live member may be acting on
// it (a new app, or one whose owner is gone), HandoverDelay otherwise.
// Called with s.mu held.
func (s *Sharder) takeOverDelay(app string, members []string, live map[string]bool) time.Duration {
	if s.owner == nil {
		// The first assignment (or the first after this replica's
		// standing came back): others may hold anything.
		if len(members) > 1 {
			return s.handoverDelay()
		}
		return 0
	}
	prev, known := s.owner[app]
	if known && prev != s.Members.Identity && live[prev] {
		return s.handoverDelay()
	}
	return 0
}
