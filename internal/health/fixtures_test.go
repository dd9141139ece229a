package health

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	"github.com/skiffcd/skiff/api/v1alpha1"
)

// The annotations a fixture carries to state the Result Assess must return.
// An absent message annotation expects an empty message.
const (
	expectedStatusAnnotation  = "health.skiff.dev/expected-status"
	expectedMessageAnnotation = "health.skiff.dev/expected-message"
)

// TestFixtures assesses every object in testdata/*.yaml. Each file holds one
// or more live objects, as a controller would read them from the cluster,
// annotated with the result expected.
func TestFixtures(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no fixtures in testdata")
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			objs := readFixture(t, file)
			if len(objs) == 0 {
				t.Fatal("no objects in fixture")
			}
			seen := map[string]bool{}
			for _, obj := range objs {
				name := obj.GetKind() + "/" + obj.GetName()
				if seen[name] {
					t.Fatalf("two fixtures named %s", name)
				}
				seen[name] = true
				t.Run(name, func(t *testing.T) {
					annotations := obj.GetAnnotations()
					status, ok := annotations[expectedStatusAnnotation]
					if !ok {
						t.Fatalf("fixture has no %s annotation", expectedStatusAnnotation)
					}
					want := Result{
						Status:  v1alpha1.HealthStatusCode(status),
						Message: annotations[expectedMessageAnnotation],
					}
					if got := Assess(obj); got != want {
						t.Errorf("Assess() = %+v, want %+v", got, want)
					}
				})
			}
		})
	}
}

// readFixture decodes every YAML document in file the way a client decodes
// API responses, so that numbers are int64 as they would be live.
func readFixture(t *testing.T, file string) []*unstructured.Unstructured {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	reader := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	var objs []*unstructured.Unstructured
	for {
		doc, err := reader.Read()
		if errors.Is(err, io.EOF) {
			return objs
		}
		if err != nil {
			t.Fatal(err)
		}
		js, err := yaml.YAMLToJSON(doc)
		if err != nil {
			t.Fatal(err)
		}
		if len(bytes.TrimSpace(js)) == 0 || string(bytes.TrimSpace(js)) == "null" {
			continue
		}
		obj := &unstructured.Unstructured{}
		if err := obj.UnmarshalJSON(js); err != nil {
			t.Fatal(err)
		}
		objs = append(objs, obj)
	}
}
