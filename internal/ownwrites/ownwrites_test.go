package ownwrites

import "testing"

func TestAtLeast(t *testing.T) {
	cases := map[string]struct {
		got, want string
		ok        bool
	}{
		"the same version":                    {got: "42", want: "42", ok: true},
		"a later integer version":             {got: "100", want: "42", ok: true},
		"an earlier integer version":          {got: "41", want: "42", ok: false},
		"opaque versions count only if equal": {got: "b", want: "a", ok: false},
		"an opaque version equal to ours":     {got: "x1", want: "x1", ok: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if ok := AtLeast(tc.got, tc.want); ok != tc.ok {
				t.Errorf("AtLeast(%q, %q) = %v, want %v", tc.got, tc.want, ok, tc.ok)
			}
		})
	}
}

// A cached copy counts as older only while it predates the write recorded;
// the record goes once the cache has caught up.
func TestCacheOlder(t *testing.T) {
	var v Versions[string]
	if v.CacheOlder("guestbook", "10") {
		t.Error("without a write recorded the cache counts as current")
	}
	v.Wrote("guestbook", "20")
	if !v.CacheOlder("guestbook", "19") {
		t.Error("a cached copy older than the write counts as current")
	}
	if v.CacheOlder("guestbook", "20") {
		t.Error("a cached copy at the write counts as stale")
	}
	if v.Recorded("guestbook") {
		t.Error("the record outlived the cache catching up")
	}
}
