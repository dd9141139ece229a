package server

import (
	"slices"
	"testing"
	"time"
)

func TestParseAccounts(t *testing.T) {
	tests := map[string]struct {
		cm     map[string]string
		secret map[string][]byte
		want   map[string]account
	}{
		"only admin exists by default, with its hash and change time": {
			secret: map[string][]byte{"admin.password": []byte("$2a$hash"), "admin.passwordMtime": []byte("2026-01-02T03:04:05Z")},
			want: map[string]account{"admin": {Name: "admin", Enabled: true, Capabilities: []string{"login"}, PasswordHash: "$2a$hash",
				PasswordMtime: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}},
		},
		"admin can be disabled": {
			cm:   map[string]string{"admin.enabled": "false"},
			want: map[string]account{"admin": {Name: "admin", Capabilities: []string{"login"}}},
		},
		"local accounts with capabilities, enabled flags and passwords": {
			cm: map[string]string{
				"accounts.alice":         "apiKey, login",
				"accounts.bob":           "login",
				"accounts.bob.enabled":   "false",
				"accounts.ci":            "apiKey",
				"accounts.alice.enabled": "true",
				"url":                    "https://skiff.example.com",
			},
			secret: map[string][]byte{"accounts.alice.password": []byte("$2a$alice"), "accounts.alice.passwordMtime": []byte("yesterday")},
			want: map[string]account{
				"admin": {Name: "admin", Enabled: true, Capabilities: []string{"login"}},
				"alice": {Name: "alice", Enabled: true, Capabilities: []string{"apiKey", "login"}, PasswordHash: "$2a$alice"},
				"bob":   {Name: "bob", Capabilities: []string{"login"}},
				"ci":    {Name: "ci", Enabled: true, Capabilities: []string{"apiKey"}},
			},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got := parseAccounts(tc.cm, tc.secret)
			if len(got) != len(tc.want) {
				t.Fatalf("got %d accounts %v, want %d", len(got), got, len(tc.want))
			}
			for n, w := range tc.want {
				g := got[n]
				if g.Name != w.Name || g.Enabled != w.Enabled || g.PasswordHash != w.PasswordHash || !g.PasswordMtime.Equal(w.PasswordMtime) || !slices.Equal(g.Capabilities, w.Capabilities) {
					t.Errorf("account %s = %+v, want %+v", n, g, w)
				}
			}
		})
	}
}
