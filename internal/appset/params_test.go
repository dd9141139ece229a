package appset

import (
	"strings"
	"testing"
)

func TestSanitizeName(t *testing.T) {
	tests := map[string]struct{ in, want string }{
		"upper case is lowered and underscores become dashes": {in: "Prod_EU", want: "prod-eu"},
		"leading and trailing dashes and dots are trimmed":    {in: "-_in.cluster._", want: "in.cluster"},
		"a name over 253 characters is cut": {
			in: strings.Repeat("a", 300), want: strings.Repeat("a", 253),
		},
		"other characters become dashes": {in: "team a/app:1", want: "team-a-app-1"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := sanitizeName(tc.in); got != tc.want {
				t.Errorf("sanitizeName(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}
