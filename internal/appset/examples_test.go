package appset

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	"github.com/skiffcd/skiff/api/v1alpha1"
)

// exampleDocs reads a file of testdata/examples: an ApplicationSet, then the
// Applications it makes.
func exampleDocs(t *testing.T, file string) (v1alpha1.ApplicationSet, []v1alpha1.Application) {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	var set v1alpha1.ApplicationSet
	var apps []v1alpha1.Application
	for i := 0; ; i++ {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			err = yaml.UnmarshalStrict(doc, &set)
		} else {
			var app v1alpha1.Application
			err = yaml.UnmarshalStrict(doc, &app)
			apps = append(apps, app)
		}
		if err != nil {
			t.Fatalf("document %d: %v", i+1, err)
		}
	}
	return set, apps
}

// Argo CD's documented examples that need no external service, written as
// an ApplicationSet and the Applications the documentation says it makes.
func TestArgoCDDocumentationExamples(t *testing.T) {
	files, err := filepath.Glob("testdata/examples/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no examples: %v", err)
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			set, want := exampleDocs(t, file)
			got, _, err := Applications(&set.Spec, testInputs)
			if err != nil {
				t.Fatal(err)
			}
			opts := []cmp.Option{cmpopts.EquateEmpty(), cmpopts.IgnoreFields(v1alpha1.Application{}, "Status")}
			if diff := cmp.Diff(want, got, opts...); diff != "" {
				t.Errorf("applications differ (-want +got):\n%s", diff)
			}
		})
	}
}
