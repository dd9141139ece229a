package clustercache

import "testing"

func TestQuietUpdate(t *testing.T) {
	base := stored{app: "shop", health: "Healthy", fingerprint: "f1"}
	with := func(edit func(*stored)) *stored {
		s := base
		edit(&s)
		return &s
	}
	tests := map[string]struct {
		old, new *stored
		quiet    bool
	}{
		"the same fingerprint, app and health is quiet": {
			old: &base, new: with(func(*stored) {}), quiet: true},
		"a new fingerprint is told": {
			old: &base, new: with(func(s *stored) { s.fingerprint = "f2" })},
		"a new health is told": {
			old: &base, new: with(func(s *stored) { s.health = "Degraded" })},
		"a move to another app is told": {
			old: &base, new: with(func(s *stored) { s.app = "cart" })},
		"an object no fingerprint was taken of is told": {
			old: with(func(s *stored) { s.fingerprint = "" }), new: with(func(s *stored) { s.fingerprint = "" })},
		"an untracked object is told (no app hears of it anyway)": {
			old: with(func(s *stored) { s.app = "" }), new: with(func(s *stored) { s.app = "" })},
		"a new object is told": {
			new: &base},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := quietUpdate(tc.old, tc.new); got != tc.quiet {
				t.Errorf("quietUpdate = %v, want %v", got, tc.quiet)
			}
		})
	}
}
