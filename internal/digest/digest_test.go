package digest

import "testing"

func TestStringsTellsFieldsApart(t *testing.T) {
	base := []string{"uid-1", "Application", "argocd", "guestbook"}
	tests := map[string]struct {
		fields []string
		same   bool
	}{
		"the same fields give the same digest": {
			fields: []string{"uid-1", "Application", "argocd", "guestbook"}, same: true,
		},
		"another field gives another digest": {
			fields: []string{"uid-2", "Application", "argocd", "guestbook"},
		},
		"the same text split between fields another way gives another digest": {
			fields: []string{"uid-1", "Application", "argocdguest", "book"},
		},
		"an empty field more gives another digest": {
			fields: []string{"uid-1", "Application", "argocd", "guestbook", ""},
		},
		"no fields give another digest": {},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got := Strings(tc.fields...) == Strings(base...)
			if got != tc.same {
				t.Errorf("same digest = %v, want %v", got, tc.same)
			}
		})
	}
}
