package application

import (
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

func TestImages(t *testing.T) {
	tests := map[string]struct {
		desired, live []string
		want          []string
	}{
		"a workload's containers and init containers": {
			desired: []string{`{kind: Deployment, spec: {template: {spec: {initContainers: [{image: busybox}], containers: [{image: nginx:1.27}, {name: no-image}]}}}}`},
			want:    []string{"busybox", "nginx:1.27"},
		},
		"a CronJob's job template and a bare Pod": {
			desired: []string{
				`{kind: CronJob, spec: {jobTemplate: {spec: {template: {spec: {containers: [{image: cron}], initContainers: [{image: cron-init}]}}}}}}`,
				`{kind: Pod, spec: {containers: [{image: pod}], initContainers: [{image: pod-init}]}}`,
			},
			want: []string{"cron", "cron-init", "pod", "pod-init"},
		},
		"desired and live images together, once each, sorted": {
			desired: []string{`{kind: Deployment, spec: {template: {spec: {containers: [{image: b:2}]}}}}`},
			live:    []string{`{kind: Deployment, spec: {template: {spec: {containers: [{image: b:1}, {image: a}]}}}}`, `{kind: Pod, spec: {containers: [{image: a}]}}`},
			want:    []string{"a", "b:1", "b:2"},
		},
		"objects without containers, or with a malformed list": {
			desired: []string{`{kind: ConfigMap, data: {spec: x}}`, `{kind: Deployment, spec: {template: {spec: {containers: "nginx"}}}}`},
			want:    []string{},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			desired, live := decodeObjects(t, tc.desired), decodeObjects(t, tc.live)
			before := decodeObjects(t, tc.desired)
			if got := images(desired, live); !slices.Equal(got, tc.want) {
				t.Errorf("images %q, want %q", got, tc.want)
			}
			for i := range desired {
				if !equalJSON(desired[i].Object, before[i].Object) {
					t.Errorf("object %d changed: %v", i, desired[i].Object)
				}
			}
		})
	}
}

func decodeObjects(t *testing.T, docs []string) []*unstructured.Unstructured {
	t.Helper()
	var out []*unstructured.Unstructured
	for _, doc := range docs {
		obj := map[string]any{}
		if err := yaml.Unmarshal([]byte(doc), &obj); err != nil {
			t.Fatal(err)
		}
		out = append(out, &unstructured.Unstructured{Object: obj})
	}
	return out
}
