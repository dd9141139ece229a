package rollout

import (
	"maps"
	"testing"
)

func TestApplyRoleMetadata(t *testing.T) {
	managed := map[string]bool{"role": true, "tier": true}
	keep := map[string]bool{"app": true}
	tests := map[string]struct {
		current, role map[string]string
		want          map[string]string
		changed       bool
	}{
		"the role's labels are added": {
			current: map[string]string{"app": "web"}, role: map[string]string{"role": "preview"},
			want: map[string]string{"app": "web", "role": "preview"}, changed: true,
		},
		"a new role replaces the old one": {
			current: map[string]string{"app": "web", "role": "preview"}, role: map[string]string{"role": "active"},
			want: map[string]string{"app": "web", "role": "active"}, changed: true,
		},
		"no role removes what roles manage": {
			current: map[string]string{"app": "web", "role": "active", "tier": "x", "other": "y"},
			want:    map[string]string{"app": "web", "other": "y"}, changed: true,
		},
		"metadata already in place is unchanged": {
			current: map[string]string{"app": "web", "role": "active"}, role: map[string]string{"role": "active"},
			want: map[string]string{"app": "web", "role": "active"},
		},
		"selector labels are never changed": {
			current: map[string]string{"app": "web"}, role: map[string]string{"app": "other", "role": "active"},
			want: map[string]string{"app": "web", "role": "active"}, changed: true,
		},
		"nothing to do on nil maps": {},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, changed := ApplyRoleMetadata(tc.current, tc.role, managed, keep)
			if changed != tc.changed || (len(got) > 0 || len(tc.want) > 0) && !maps.Equal(got, tc.want) {
				t.Errorf("got %v (changed %v), want %v (changed %v)", got, changed, tc.want, tc.changed)
			}
		})
	}
}
