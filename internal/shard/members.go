package shard

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"
	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

const (
	// MemberLabel marks the Leases of the replicas that share the work.
	MemberLabel = "skiff.io/shard-member"
	// leasePrefix starts each member's Lease name.
	leasePrefix = "skiff-shard-"
	// forgetAfter is how many lease durations a Lease may go unrenewed
	// before a member deletes it: the Leases of replicas gone for good
	// (each pod has a name of its own) do not pile up.
	forgetAfter = 20
)

// Membership keeps this replica's Lease renewed and knows the live
// members: those whose Lease this replica saw renewed within its duration.
// It times Leases by its own clock, when it saw each renewal, as
// client-go's leader election does, so clocks that disagree do not matter.
//
// A replica whose renewal has failed for RenewDeadline knows no members,
// itself included, and so owns nothing; the others take its apps only
// after LeaseDuration, which is longer.
type Membership struct {
	// Client writes this replica's Lease; Reader lists all of them,
	// uncached.
	Client client.Client
	Reader client.Reader
	// Namespace holds the Leases; Identity names this replica.
	Namespace, Identity string
	// LeaseDuration, RenewDeadline and RetryPeriod time the Leases as
	// leader election's do (defaults 15 s, 10 s, 2 s): each replica renews
	// and lists every RetryPeriod.
	LeaseDuration, RenewDeadline, RetryPeriod time.Duration
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Annotations, when set, gives what this replica publishes on its
	// Lease at each renewal (the clusters' states it follows), for the
	// other replicas to read: it costs no request of its own.
	Annotations func() map[string]string
	// Log hears of changes of this replica's standing and of the members:
	// a failed renewal, a lapse and its end, a member joining or leaving.
	// The zero value discards them.
	Log logr.Logger

	mu sync.Mutex
	// renewed is when this replica last renewed its Lease and listed all.
	renewed time.Time
	seen    map[string]sighting
	members []string
	subs    []func()
	// own is this replica's Lease as its last renewal wrote it; only the
	// renewing goroutine uses it.
	own *coordinationv1.Lease
	// told is the view the subscribers were last told of.
	told     []string
	toldOK   bool
	toldOnce bool
	// lapses counts the times a reader (View, Standing) found this
	// replica's standing lapsed; toldLapses is the count when the
	// subscribers were last told.
	lapses, toldLapses uint64
	// failing counts the renewals failed in a row, logged is the standing
	// and the members the log was last told of; only the renewing
	// goroutine uses them.
	failing      int
	loggedLapsed bool
	logged       []string
}

// sighting is the last renewal seen of one Lease and when it was seen.
type sighting struct {
	holder   string
	renew    metav1.MicroTime
	at       time.Time
	duration time.Duration
}

// LeaseName is the name of the Lease of the member identity.
func LeaseName(identity string) string {
	name := strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '-', r == '.':
			return r
		case r >= 'A' && r <= 'Z':
			return r + ('a' - 'A')
		}
		return '-'
	}, identity)
	name = strings.Trim(leasePrefix+name, "-.")
	if len(name) > 253 {
		name = name[:253]
	}
	return name
}

func (m *Membership) now() time.Time {
	if m.Now != nil {
		return m.Now()
	}
	return time.Now()
}

func (m *Membership) leaseDuration() time.Duration { return cmpOr(m.LeaseDuration, 15*time.Second) }
func (m *Membership) renewDeadline() time.Duration { return cmpOr(m.RenewDeadline, 10*time.Second) }

// RetryPeriodOrDefault is how often members renew and list.
func (m *Membership) RetryPeriodOrDefault() time.Duration { return cmpOr(m.RetryPeriod, 2*time.Second) }

func cmpOr(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}

// Subscribe calls fn after the live members changed.
func (m *Membership) Subscribe(fn func()) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.subs = append(m.subs, fn)
}

// View returns the live members in name order; ok is false while this
// replica's own Lease is not known to be held (it has not been renewed
// within RenewDeadline), and then the replica must act on nothing.
func (m *Membership) View() (members []string, ok bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.standingLocked() {
		m.lapses++
		return nil, false
	}
	return slices.Clone(m.members), true
}

// NeedLeaderElection implements manager.LeaderElectionRunnable: every
// replica is a member.
func (*Membership) NeedLeaderElection() bool { return false }

// Start renews and lists every RetryPeriod until ctx ends. The Lease is
// not deleted then: the replica may still be finishing work as it stops;
// Release gives it up once that work has ended.
func (m *Membership) Start(ctx context.Context) error {
	wait.UntilWithContext(ctx, m.tick, m.RetryPeriodOrDefault())
	return nil
}

// Release deletes this replica's Lease, so that the others take its apps at
// their next listing instead of after LeaseDuration. Call it only after
// Start has returned and every worker acting on the apps has stopped: from
// then on this replica writes nothing. The delete is conditioned on the
// Lease being the one this replica last wrote.
func (m *Membership) Release(ctx context.Context) error {
	own := m.own
	if own == nil {
		return nil // never renewed, or the last renewal failed: it expires
	}
	err := m.Client.Delete(ctx, own, client.Preconditions{UID: &own.UID, ResourceVersion: &own.ResourceVersion})
	if err := client.IgnoreNotFound(err); err != nil {
		return fmt.Errorf("releasing the Lease %s: %w", own.Name, err)
	}
	m.own = nil
	return nil
}

// tick renews this replica's Lease, lists every member's and tells the
// subscribers when the live members changed (or this replica's own
// standing did).
func (m *Membership) tick(ctx context.Context) {
	// A renewal may take up to the renew deadline, as client-go's leader
	// election allows: an API server loaded by the syncs answered Lease
	// updates in more than a retry period, and every tick then failed
	// until the standing lapsed (bench/apps round 24).
	ctx, cancel := context.WithTimeout(ctx, m.renewDeadline())
	defer cancel()
	start := m.now()
	err := m.renew(ctx)
	if err == nil {
		err = m.list(ctx, start)
	}
	m.logChanges(err)
	m.tell()
}

// logChanges logs what an operator needs to explain a pause of this
// replica's apps: the first failure of a streak (not every retry), a lapse
// of the standing and its end, and the members when they change.
func (m *Membership) logChanges(err error) {
	switch {
	case err != nil:
		m.failing++
		if m.failing == 1 {
			m.Log.Info("renewing or listing the member Leases failed; retrying", "error", err.Error())
		}
	case m.failing > 0:
		m.Log.Info("renewing the member Lease succeeded again", "failedInARow", m.failing)
		m.failing = 0
	}
	m.mu.Lock()
	lapsed := !m.standingLocked()
	members := slices.Clone(m.members)
	m.mu.Unlock()
	if lapsed != m.loggedLapsed {
		if lapsed {
			m.Log.Info("this replica's standing lapsed: it acts on no app until its Lease is renewed", "renewDeadline", m.renewDeadline().String())
		} else {
			m.Log.Info("this replica's standing is back")
		}
		m.loggedLapsed = lapsed
	}
	if !lapsed && !slices.Equal(members, m.logged) {
		m.Log.Info("the replicas sharing the apps changed", "members", members)
		m.logged = members
	}
}

// tell calls the subscribers when the view differs from the one they were
// last told of, or when a reader (an assignment's View, or Owns through
// Standing) saw this replica's standing lapse since:
// a lapse between two ticks (a slow renewal under load) is seen by
// whoever reads View then, and the tick that renews must tell them it
// came back, though the view it last told is the same.
func (m *Membership) tell() {
	members, ok := m.View()
	m.mu.Lock()
	changed := !m.toldOnce || ok != m.toldOK || !slices.Equal(members, m.told) || m.lapses != m.toldLapses
	m.told, m.toldOK, m.toldOnce, m.toldLapses = members, ok, true, m.lapses
	subs := slices.Clone(m.subs)
	m.mu.Unlock()
	if changed {
		for _, fn := range subs {
			fn()
		}
	}
}

// Standing reports whether this replica's own Lease is known to be held.
func (m *Membership) Standing() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.standingLocked() {
		m.lapses++
		return false
	}
	return true
}

// Lapses counts the times a reader found this replica's standing lapsed:
// work refused then (Owns was false) may have been dropped.
func (m *Membership) Lapses() uint64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.lapses
}

func (m *Membership) standingLocked() bool {
	return !m.renewed.IsZero() && m.now().Sub(m.renewed) <= m.renewDeadline()
}

// renew creates or renews this replica's Lease.
func (m *Membership) renew(ctx context.Context) error {
	now := metav1.NewMicroTime(m.now())
	seconds := int32(m.leaseDuration() / time.Second)
	key := client.ObjectKey{Namespace: m.Namespace, Name: LeaseName(m.Identity)}
	// The Lease as this replica last wrote it: a renewal costs one
	// request; after a failed one, the Lease is read again.
	lease, err := m.own, error(nil)
	m.own = nil
	if lease == nil {
		lease = &coordinationv1.Lease{}
		err = m.Reader.Get(ctx, key, lease)
	}
	switch {
	case apierrors.IsNotFound(err):
		lease = &coordinationv1.Lease{
			ObjectMeta: metav1.ObjectMeta{Name: key.Name, Namespace: key.Namespace,
				Labels: map[string]string{MemberLabel: "true", "app.kubernetes.io/part-of": "skiff"}},
			Spec: coordinationv1.LeaseSpec{HolderIdentity: &m.Identity, LeaseDurationSeconds: &seconds,
				AcquireTime: &now, RenewTime: &now},
		}
		m.annotate(lease)
		if err := m.Client.Create(ctx, lease); err != nil {
			return fmt.Errorf("creating the Lease %s: %w", key.Name, err)
		}
		m.own = lease
		return nil
	case err != nil:
		return fmt.Errorf("reading the Lease %s: %w", key.Name, err)
	}
	lease.Spec.HolderIdentity, lease.Spec.LeaseDurationSeconds, lease.Spec.RenewTime = &m.Identity, &seconds, &now
	m.annotate(lease)
	if err := m.Client.Update(ctx, lease); err != nil {
		return fmt.Errorf("renewing the Lease %s: %w", key.Name, err)
	}
	m.own = lease
	return nil
}

// annotate puts what this replica publishes on its lease.
func (m *Membership) annotate(lease *coordinationv1.Lease) {
	if m.Annotations == nil {
		return
	}
	for k, v := range m.Annotations() {
		if lease.Annotations == nil {
			lease.Annotations = map[string]string{}
		}
		lease.Annotations[k] = v
	}
}

// Published returns what each live member published under the annotation
// key, read from their Leases now, by member.
func (m *Membership) Published(ctx context.Context, key string) (map[string]string, error) {
	members, _ := m.View()
	var leases coordinationv1.LeaseList
	if err := m.Reader.List(ctx, &leases, client.InNamespace(m.Namespace), client.MatchingLabels{MemberLabel: "true"}); err != nil {
		return nil, fmt.Errorf("listing the members' Leases: %w", err)
	}
	out := map[string]string{}
	for _, l := range leases.Items {
		holder := l.Spec.HolderIdentity
		if holder == nil || !slices.Contains(members, *holder) {
			continue
		}
		if v, ok := l.Annotations[key]; ok {
			out[*holder] = v
		}
	}
	return out, nil
}

// list reads every member's Lease and records the live members, and that
// this replica held its own Lease at renewedAt.
func (m *Membership) list(ctx context.Context, renewedAt time.Time) error {
	var leases coordinationv1.LeaseList
	if err := m.Reader.List(ctx, &leases, client.InNamespace(m.Namespace), client.MatchingLabels{MemberLabel: "true"}); err != nil {
		return fmt.Errorf("listing the members' Leases: %w", err)
	}
	for _, l := range m.record(leases.Items, renewedAt) {
		// Another member may have deleted it first, or it came back: the
		// precondition leaves a renewed Lease alone.
		_ = m.Client.Delete(ctx, &l, client.Preconditions{ResourceVersion: &l.ResourceVersion})
	}
	return nil
}

// record takes in a listing of the Leases and returns those gone unrenewed
// for long enough to delete.
func (m *Membership) record(leases []coordinationv1.Lease, renewedAt time.Time) (stale []coordinationv1.Lease) {
	now := m.now()
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.seen == nil {
		m.seen = map[string]sighting{}
	}
	var live []string
	present := map[string]bool{}
	for _, l := range leases {
		present[l.Name] = true
		if l.Spec.HolderIdentity == nil || l.Spec.RenewTime == nil {
			continue
		}
		s, known := m.seen[l.Name]
		if !known || !s.renew.Equal(l.Spec.RenewTime) || s.holder != *l.Spec.HolderIdentity {
			s = sighting{holder: *l.Spec.HolderIdentity, renew: *l.Spec.RenewTime, at: now}
		}
		s.duration = m.leaseDuration()
		if l.Spec.LeaseDurationSeconds != nil && *l.Spec.LeaseDurationSeconds > 0 {
			s.duration = time.Duration(*l.Spec.LeaseDurationSeconds) * time.Second
		}
		m.seen[l.Name] = s
		switch {
		case s.holder == m.Identity || now.Sub(s.at) < s.duration:
			live = append(live, s.holder)
		case now.Sub(s.at) > forgetAfter*s.duration:
			stale = append(stale, l)
		}
	}
	for name := range m.seen {
		if !present[name] {
			delete(m.seen, name)
		}
	}
	slices.Sort(live)
	m.members = slices.Compact(live)
	m.renewed = renewedAt
	return stale
}
