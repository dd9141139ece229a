package mask

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

func TestSecretMasksEveryValue(t *testing.T) {
	tests := map[string]struct {
		manifest   string
		wantHidden []string
		wantShown  []string
	}{
		"data and stringData values are hidden, keys shown": {
			manifest: `apiVersion: v1
kind: Secret
metadata: {name: db}
data: {password: c2VjcmV0LXB3}
stringData: {token: plain-token}`,
			wantHidden: []string{"c2VjcmV0LXB3", "plain-token"},
			wantShown:  []string{"password", "token", Placeholder},
		},
		"the last-applied annotation that repeats values is hidden": {
			manifest: `apiVersion: v1
kind: Secret
metadata:
  name: db
  annotations: {kubectl.kubernetes.io/last-applied-configuration: '{"data":{"password":"c2VjcmV0LXB3"}}', team: a}
data: {password: c2VjcmV0LXB3}`,
			wantHidden: []string{"c2VjcmV0LXB3"},
			wantShown:  []string{"team: a"},
		},
		"a ConfigMap is shown as it is": {
			manifest:  "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {password: visible}",
			wantShown: []string{"visible"},
		},
		"a Secret kind of another group is not core's Secret": {
			manifest:  "apiVersion: example.com/v1\nkind: Secret\nmetadata: {name: c}\ndata: {a: visible}",
			wantShown: []string{"visible"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			obj := &unstructured.Unstructured{}
			if err := yaml.Unmarshal([]byte(tc.manifest), &obj.Object); err != nil {
				t.Fatal(err)
			}
			before, _ := yaml.Marshal(obj.Object)
			out, err := yaml.Marshal(Secret(obj).Object)
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range tc.wantHidden {
				if strings.Contains(string(out), s) {
					t.Errorf("%q still visible:\n%s", s, out)
				}
			}
			for _, s := range tc.wantShown {
				if !strings.Contains(string(out), s) {
					t.Errorf("%q missing:\n%s", s, out)
				}
			}
			if after, _ := yaml.Marshal(obj.Object); string(after) != string(before) {
				t.Errorf("the input was modified")
			}
		})
	}
}
