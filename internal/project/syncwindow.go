package project

import (
	"fmt"
	"strings"
	"time"

	"github.com/robfig/cron/v3"

	"github.com/skiffcd/skiff/api/v1alpha1"
)

// Kinds of sync window.
const (
	WindowAllow = "allow"
	WindowDeny  = "deny"
)

// Window is a sync window of a project together with its position in
// spec.syncWindows, which names it in messages.
type Window struct {
	Index int
	v1alpha1.SyncWindow
}

// String describes w for messages, e.g.
// `deny window 0 (schedule "0 22 * * *", duration 1h, time zone Europe/Paris)`.
func (w Window) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s window %d (schedule %q, duration %s", w.Kind, w.Index, w.Schedule, w.Duration)
	if w.TimeZone != "" {
		fmt.Fprintf(&b, ", time zone %s", w.TimeZone)
	}
	b.WriteString(")")
	return b.String()
}

// cronParser reads the five-field cron schedules Argo CD accepts: minute,
// hour, day of month, month and day of week, without descriptors.
var cronParser = cron.NewParser(cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow)

// schedule is a parsed sync window.
type schedule struct {
	cron     cron.Schedule
	duration time.Duration
	loc      *time.Location
}

// parseWindow checks w and returns its parsed schedule.
func parseWindow(w v1alpha1.SyncWindow) (schedule, error) {
	if w.Kind != WindowAllow && w.Kind != WindowDeny {
		return schedule{}, fmt.Errorf("kind %q is neither %q nor %q", w.Kind, WindowAllow, WindowDeny)
	}
	c, err := cronParser.Parse(w.Schedule)
	if err != nil {
		return schedule{}, fmt.Errorf("cannot parse schedule %q as a five-field cron expression: %w", w.Schedule, err)
	}
	d, err := time.ParseDuration(w.Duration)
	if err != nil {
		return schedule{}, fmt.Errorf("cannot parse duration %q: %w", w.Duration, err)
	}
	if d <= 0 {
		return schedule{}, fmt.Errorf("duration %q is not positive", w.Duration)
	}
	loc, err := time.LoadLocation(w.TimeZone)
	if err != nil {
		return schedule{}, fmt.Errorf("unknown time zone %q: %w", w.TimeZone, err)
	}
	return schedule{cron: c, duration: d, loc: loc}, nil
}

// ValidateSyncWindow returns an error that says what is wrong with w: its
// kind, cron schedule, duration or time zone.
func ValidateSyncWindow(w v1alpha1.SyncWindow) error {
	_, err := parseWindow(w)
	return err
}

// active reports whether a window of s is open at now: whether the latest
// start at or before now is less than the duration ago. Starts are computed
// in the window's time zone, so they follow its daylight saving changes.
func (s schedule) active(now time.Time) bool {
	now = now.In(s.loc)
	start := s.cron.Next(now.Add(-s.duration))
	return !start.IsZero() && !start.After(now)
}

// next returns the first start after now, or the zero time if there is none
// within five years.
func (s schedule) next(now time.Time) time.Time {
	return s.cron.Next(now.In(s.loc))
}

// MatchingWindows returns the sync windows of p that apply to the
// Application named app deploying to namespace of cluster (a server URL or
// a cluster name; the local cluster matches both InClusterServer and
// InClusterName).
//
// A window applies when any of its applications, namespaces or clusters
// globs matches; with andOperator, every non-empty list must match. A
// window with none of the three lists applies to nothing.
func MatchingWindows(p *v1alpha1.AppProject, app, namespace, cluster string) []Window {
	if p == nil {
		return nil
	}
	var clusters []string // as Argo CD, an empty cluster matches no pattern
	switch cluster {
	case "":
	case InClusterServer, InClusterName:
		clusters = []string{InClusterServer, InClusterName}
	default:
		clusters = []string{cluster}
	}
	var out []Window
	for i, w := range p.Spec.SyncWindows {
		if windowApplies(w, app, namespace, clusters) {
			out = append(out, Window{Index: i, SyncWindow: w})
		}
	}
	return out
}

func windowApplies(w v1alpha1.SyncWindow, app, namespace string, clusters []string) bool {
	type criterion struct {
		patterns []string
		values   []string
	}
	criteria := []criterion{
		{w.Applications, []string{app}},
		{w.Namespaces, []string{namespace}},
		{w.Clusters, clusters},
	}
	some := false
	for _, c := range criteria {
		if len(c.patterns) == 0 {
			continue
		}
		matched := anyMatch(c.patterns, c.values)
		if matched && !w.UseAndOperator {
			return true
		}
		if !matched && w.UseAndOperator {
			return false
		}
		some = true
	}
	return w.UseAndOperator && some
}

// anyMatch reports whether any of patterns matches any of values.
func anyMatch(patterns, values []string) bool {
	for _, p := range patterns {
		for _, v := range values {
			if globMatch(p, v, false) {
				return true
			}
		}
	}
	return false
}

// ActiveWindows returns the sync windows of p that apply to the Application
// (see MatchingWindows) and are open at now, split by kind. It returns an
// error, naming the window, if an applicable window cannot be read; windows
// that do not apply are not checked.
func ActiveWindows(p *v1alpha1.AppProject, now time.Time, app, namespace, cluster string) (allows, denies []Window, err error) {
	for _, w := range MatchingWindows(p, app, namespace, cluster) {
		s, err := parseWindow(w.SyncWindow)
		if err != nil {
			return nil, nil, fmt.Errorf("sync window %d of project %s: %w", w.Index, p.Name, err)
		}
		if !s.active(now) {
			continue
		}
		if w.Kind == WindowDeny {
			denies = append(denies, w)
		} else {
			allows = append(allows, w)
		}
	}
	return allows, denies, nil
}

// CanSync decides, as Argo CD does, whether the Application may sync at now;
// manual tells whether a user asked for the sync. The reason says why in
// either case.
//
//   - With no applicable window, syncs are allowed.
//   - An active deny window blocks syncs; manual syncs pass only if every
//     active deny window has manualSync.
//   - Otherwise an active allow window allows syncs.
//   - Otherwise, if allow windows apply but none is active, syncs are
//     blocked; manual syncs pass only if every such window has manualSync.
//
// A window that applies but cannot be read blocks every sync.
func CanSync(p *v1alpha1.AppProject, now time.Time, app, namespace, cluster string, manual bool) (bool, string) {
	matching := MatchingWindows(p, app, namespace, cluster)
	if len(matching) == 0 {
		return true, "no sync window applies"
	}
	allows, denies, err := ActiveWindows(p, now, app, namespace, cluster)
	if err != nil {
		return false, "sync blocked: invalid " + err.Error()
	}
	if len(denies) > 0 {
		if manual && allManual(denies) {
			return true, "manual sync permitted during active " + describe(denies)
		}
		return false, "sync blocked by active " + describe(denies)
	}
	if len(allows) > 0 {
		return true, "sync allowed by active " + describe(allows)
	}
	var inactive []Window
	for _, w := range matching {
		if w.Kind == WindowAllow {
			inactive = append(inactive, w)
		}
	}
	if len(inactive) == 0 {
		return true, "no allow window applies and no deny window is active"
	}
	if manual && allManual(inactive) {
		return true, "manual sync permitted outside " + describe(inactive)
	}
	reason := "sync blocked: no allow window is active (" + describe(inactive) + ")"
	if next, ok := nextStart(inactive, now); ok {
		reason += "; next opens at " + next.UTC().Format(time.RFC3339)
	}
	return false, reason
}

func allManual(ws []Window) bool {
	for _, w := range ws {
		if !w.ManualSync {
			return false
		}
	}
	return true
}

func describe(ws []Window) string {
	parts := make([]string, len(ws))
	for i, w := range ws {
		parts[i] = w.String()
	}
	return strings.Join(parts, ", ")
}

// nextStart returns the earliest start after now among ws.
func nextStart(ws []Window, now time.Time) (time.Time, bool) {
	var first time.Time
	for _, w := range ws {
		s, err := parseWindow(w.SyncWindow)
		if err != nil {
			continue
		}
		if n := s.next(now); !n.IsZero() && (first.IsZero() || n.Before(first)) {
			first = n
		}
	}
	return first, !first.IsZero()
}
