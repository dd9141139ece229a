package v1alpha1

import (
	"encoding/json"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
)

func TestAnyStringAcceptsEveryScalar(t *testing.T) {
	tests := map[string]struct {
		json    string
		want    string
		wantErr bool
	}{
		"a string stays as written":        {json: `"9090"`, want: "9090"},
		"a bare integer keeps its text":    {json: `9090`, want: "9090"},
		"a bare float keeps its text":      {json: `0.95`, want: "0.95"},
		"a boolean keeps its text":         {json: `true`, want: "true"},
		"null is empty":                    {json: `null`, want: ""},
		"an object is refused with reason": {json: `{"a":1}`, wantErr: true},
		"a list is refused with reason":    {json: `[1]`, wantErr: true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			var arg Argument
			err := json.Unmarshal([]byte(`{"name":"x","value":`+tc.json+`}`), &arg)
			if tc.wantErr {
				if err == nil {
					t.Fatalf("no error for %s", tc.json)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := arg.Value.String(); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
			// Through the unstructured converter, as informers and dynamic clients decode.
			var fromU Argument
			u := map[string]any{"name": "x"}
			var v any
			_ = json.Unmarshal([]byte(tc.json), &v)
			u["value"] = v
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u, &fromU); err != nil {
				t.Fatalf("unstructured: %v", err)
			}
			if got := fromU.Value.String(); got != tc.want {
				t.Errorf("unstructured: got %q, want %q", got, tc.want)
			}
			out, err := json.Marshal(arg)
			if err != nil {
				t.Fatal(err)
			}
			want := `{"name":"x","value":` + mustJSON(tc.want) + `}`
			if tc.json == "null" {
				want = `{"name":"x"}`
			}
			if string(out) != want {
				t.Errorf("written as %s, want %s", out, want)
			}
		})
	}
}

func mustJSON(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
