package argocdcm

import (
	"slices"
	"strings"
	"testing"
)

func TestParseHelmValuesFileSchemes(t *testing.T) {
	tests := map[string]struct {
		value   *string
		want    []string
		wantErr string
	}{
		"absent is Argo CD's default, https only": {want: []string{"https"}},
		"empty keeps the default":                 {value: ptr(" "), want: []string{"https"}},
		"a list is trimmed, lower-cased and deduplicated": {value: ptr(" http, HTTPS ,https,"),
			want: []string{"http", "https"}},
		"an invalid scheme is an error naming the key and the others apply": {value: ptr("http, not a scheme"),
			want: []string{"http"}, wantErr: `helm.valuesFileSchemes: "not a scheme" is not a URL scheme`},
		"only invalid schemes keep the default": {value: ptr("1http"),
			want: []string{"https"}, wantErr: `"1http" is not a URL scheme`},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			data := map[string]string{}
			if tc.value != nil {
				data[keyHelmValuesFileSchemes] = *tc.value
			}
			s, errs := Parse(data)
			if !slices.Equal(s.Helm.ValuesFileSchemes, tc.want) {
				t.Errorf("schemes = %v, want %v", s.Helm.ValuesFileSchemes, tc.want)
			}
			switch {
			case tc.wantErr == "" && len(errs) > 0:
				t.Errorf("errors %v, want none", errs)
			case tc.wantErr != "" && (len(errs) != 1 || !strings.Contains(errs[0].Error(), tc.wantErr)):
				t.Errorf("errors %v, want one containing %q", errs, tc.wantErr)
			}
		})
	}
}

func ptr(s string) *string { return &s }
