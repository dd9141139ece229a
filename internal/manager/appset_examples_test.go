package manager

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/skiffcd/skiff/api/v1alpha1"
	"github.com/skiffcd/skiff/internal/testwait"
)

// examplesDir holds Argo CD's documented ApplicationSet examples, each an
// ApplicationSet and the Applications the documentation says it makes.
const examplesDir = "../appset/testdata/examples"

// yamlDocs reads the documents of a YAML file as they are written.
func yamlDocs(t *testing.T, file string) []*unstructured.Unstructured {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	var out []*unstructured.Unstructured
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		obj := map[string]any{}
		if err := yaml.Unmarshal(doc, &obj); err != nil {
			t.Fatalf("%s: document %d: %v", file, len(out)+1, err)
		}
		out = append(out, &unstructured.Unstructured{Object: obj})
	}
}

// appView is what the documentation says of an Application: name, labels,
// annotations, finalizers and spec.
func appView(a v1alpha1.Application) v1alpha1.Application {
	return v1alpha1.Application{
		ObjectMeta: metav1.ObjectMeta{Name: a.Name, Labels: a.Labels, Annotations: a.Annotations, Finalizers: a.Finalizers},
		Spec:       a.Spec,
	}
}

// Argo CD's documented ApplicationSet examples that need no external
// service, applied as written to skiff server with the real generators
// (only their namespace changed), make exactly the documented
// Applications. Each runs in a namespace of its own with what it presumes
// exists: its project, and cluster Secrets for the clusters it selects or
// deploys to.
func TestArgoCDDocumentationExamplesAppliedAsWritten(t *testing.T) {
	saved := generateApplications
	generateApplications = nil // the real generators
	t.Cleanup(func() { generateApplications = saved })
	presumed := map[string][]string{
		"list.yaml":           {"testdata/appset-examples/list.yaml"},
		"clusters.yaml":       {"testdata/appset-examples/clusters.yaml"},
		"merge.yaml":          {"testdata/appset-examples/clusters.yaml"},
		"template-patch.yaml": nil,
	}
	for example, fixtures := range presumed {
		t.Run(example, func(t *testing.T) {
			ctx := context.Background()
			ns := cluster.Namespace(t)
			c := cluster.Client(t)
			for _, file := range fixtures {
				for _, obj := range yamlDocs(t, file) {
					obj.SetNamespace(ns)
					if err := c.Create(ctx, obj); err != nil {
						t.Fatalf("%s: %v", file, err)
					}
				}
			}
			docs := yamlDocs(t, filepath.Join(examplesDir, example))
			set, expected := docs[0], docs[1:]
			var want []v1alpha1.Application
			for i, doc := range expected {
				data, err := yaml.Marshal(doc.Object)
				if err != nil {
					t.Fatal(err)
				}
				var app v1alpha1.Application
				if err := yaml.UnmarshalStrict(data, &app); err != nil {
					t.Fatalf("expected app %d: %v", i+1, err)
				}
				want = append(want, appView(app))
			}
			if len(want) == 0 {
				t.Fatalf("%s documents no Applications", example)
			}
			runManager(t, cluster.Config, Options{Namespace: ns, LeaderElection: true, RefreshPeriod: 10 * time.Minute}, false)
			set.SetNamespace(ns)
			if err := c.Create(ctx, set); err != nil {
				t.Fatal(err)
			}
			byName := func(a, b v1alpha1.Application) int { return strings.Compare(a.Name, b.Name) }
			slices.SortFunc(want, byName)
			opts := []cmp.Option{cmpopts.EquateEmpty(), cmpopts.IgnoreFields(v1alpha1.Application{}, "Status")}
			documented := func() error {
				list := &v1alpha1.ApplicationList{}
				if err := c.List(ctx, list, client.InNamespace(ns)); err != nil {
					return err
				}
				var got []v1alpha1.Application
				for _, a := range list.Items {
					got = append(got, appView(a))
				}
				slices.SortFunc(got, byName)
				diff := cmp.Diff(want, got, opts...)
				if diff == "" {
					return nil
				}
				// The set's conditions say why when it made none or some.
				applied := &v1alpha1.ApplicationSet{}
				if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: set.GetName()}, applied); err != nil {
					return err
				}
				return fmt.Errorf("applications differ (-want +got):\n%s\nthe set's conditions: %+v", diff, applied.Status.Conditions)
			}
			testwait.Eventually(t, "the documented Applications", documented, testwait.Timeout(30*time.Second))
			// They stay so while the Application controller compares them
			// (it does within these seconds): the two controllers do not
			// rewrite them in turn.
			testwait.Consistently(t, "the documented Applications", 3*time.Second, documented)
		})
	}
}
