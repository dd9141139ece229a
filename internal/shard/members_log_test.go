package shard

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr/funcr"
)

// An operator reads a pause of a replica's apps in its log: the first
// failed renewal of a streak, the lapse and its end, the members when they
// change; a quiet renewal logs nothing.
func TestMembershipLogsItsStandingAndMembersWhenTheyChange(t *testing.T) {
	clock := &fakeClock{now: time.Unix(1000, 0)}
	var lines []string
	m := &Membership{Identity: "b", Now: clock.Now,
		Log: funcr.New(func(_, args string) { lines = append(lines, args) }, funcr.Options{})}
	renewed := func(members ...string) {
		m.mu.Lock()
		m.members, m.renewed = members, clock.now
		m.mu.Unlock()
	}
	steps := []struct {
		name      string
		do        func()
		err       error
		wantLines []string // substrings, one per line logged by this step
	}{
		{"the first renewal logs the members", func() { renewed("a", "b") }, nil,
			[]string{`"members"=["a" "b"]`}},
		{"a quiet renewal logs nothing", func() { renewed("a", "b") }, nil, nil},
		{"a failed renewal is logged once", func() {}, errors.New("timeout"),
			[]string{`failed; retrying" "error"="timeout"`}},
		{"the next failure of the streak is not", func() {}, errors.New("timeout"), nil},
		{"past the renew deadline the lapse is logged", func() { clock.now = clock.now.Add(11 * time.Second) },
			errors.New("timeout"), []string{"standing lapsed"}},
		{"the renewal after it logs the streak's end, the standing back and the new members", func() { renewed("b") }, nil,
			[]string{`succeeded again" "failedInARow"=3`, "standing is back", `"members"=["b"]`}},
	}
	for _, step := range steps {
		lines = nil
		step.do()
		m.logChanges(step.err)
		if len(lines) != len(step.wantLines) {
			t.Fatalf("%s: logged %q, want %d lines", step.name, lines, len(step.wantLines))
		}
		for i, want := range step.wantLines {
			if !strings.Contains(lines[i], want) {
				t.Errorf("%s: line %d is %q, want it to contain %q", step.name, i, lines[i], want)
			}
		}
	}
	if !slices.Equal(m.logged, []string{"b"}) {
		t.Errorf("logged members %v", m.logged)
	}
}
