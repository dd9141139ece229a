package appsetcli

import (
	"strings"
	"testing"
)

func TestReadSets(t *testing.T) {
	tests := map[string]struct {
		in        string
		wantNames []string
		wantErr   string
	}{
		"two YAML documents are two sets": {
			in:        "apiVersion: argoproj.io/v1alpha1\nkind: ApplicationSet\nmetadata: {name: a}\n---\n---\nkind: ApplicationSet\nmetadata: {name: b}\n",
			wantNames: []string{"a", "b"},
		},
		"JSON is read too": {
			in:        `{"kind":"ApplicationSet","metadata":{"name":"j"},"spec":{"generators":[{"list":{"elements":[{"a":"b"}]}}]}}`,
			wantNames: []string{"j"},
		},
		"another kind is refused with its name": {in: "kind: Application\nmetadata: {name: a}\n", wantErr: `document 1 is a "Application"`},
		"an empty input is an error":            {in: "", wantErr: "no ApplicationSet"},
		"a broken document says which it is":    {in: "kind: ApplicationSet\nmetadata: {name: a}\n---\nkind: [\n", wantErr: "document 2"},
		"a field of the wrong type is an error": {in: "kind: ApplicationSet\nmetadata: {name: a}\nspec: {generators: 3}\n", wantErr: "document 1"},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			sets, err := ReadSets(strings.NewReader(tt.in))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, s := range sets {
				names = append(names, s.Name)
			}
			if strings.Join(names, ",") != strings.Join(tt.wantNames, ",") {
				t.Errorf("read %v, want %v", names, tt.wantNames)
			}
		})
	}
}
