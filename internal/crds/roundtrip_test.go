package crds_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/restmapper"
	"sigs.k8s.io/yaml"

	"github.com/skiffcd/skiff/internal/kubeclient"
)

// fixture is one YAML document of a file under testdata/.
type fixture struct {
	file string
	obj  *unstructured.Unstructured
}

func (f fixture) name() string {
	return fmt.Sprintf("%s/%s/%s", filepath.Base(f.file), f.obj.GetKind(), f.obj.GetName())
}

// loadFixtures reads every document of the YAML files matching pattern.
func loadFixtures(t *testing.T, pattern string) []fixture {
	t.Helper()
	files, err := filepath.Glob(pattern)
	if err != nil || len(files) == 0 {
		t.Fatalf("no fixtures match %s: %v", pattern, err)
	}
	var out []fixture
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
		for {
			doc, err := r.Read()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatalf("%s: %v", file, err)
			}
			js, err := yaml.YAMLToJSON(doc)
			if err != nil {
				t.Fatalf("%s: %v", file, err)
			}
			if bytes.Equal(bytes.TrimSpace(js), []byte("null")) {
				continue
			}
			obj := &unstructured.Unstructured{}
			if err := obj.UnmarshalJSON(js); err != nil {
				t.Fatalf("%s: %v", file, err)
			}
			out = append(out, fixture{file: file, obj: obj})
		}
	}
	return out
}

// serverSetMetadata is metadata the API server owns; a manifest copied from
// `kubectl edit` carries the values of another cluster.
var serverSetMetadata = []string{"uid", "resourceVersion", "creationTimestamp", "generation", "selfLink", "managedFields"}

// comparable returns the object as the API server would be expected to keep
// it: server-owned metadata removed and null values dropped (null and absent
// mean the same to Kubernetes).
func comparable(obj *unstructured.Unstructured) map[string]any {
	out := obj.DeepCopy().Object
	for _, f := range serverSetMetadata {
		unstructured.RemoveNestedField(out, "metadata", f)
	}
	return dropNulls(out).(map[string]any)
}

func dropNulls(v any) any {
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			if e == nil {
				delete(v, k)
				continue
			}
			v[k] = dropNulls(e)
		}
	case []any:
		for i := range v {
			v[i] = dropNulls(v[i])
		}
	}
	return v
}

// Every argoproj.io manifest of the seed articles, and a manifest full of
// fields Skiff does not model, is written to the real API server and read
// back unchanged: no field is pruned, renamed or rejected.
func TestManifestsRoundTripThroughTheAPIServerWithoutLoss(t *testing.T) {
	installed(t)
	ctx := context.Background()
	ns := cluster.Namespace(t)
	dyn, err := dynamic.NewForConfig(cluster.Config)
	if err != nil {
		t.Fatal(err)
	}
	disc, err := discovery.NewDiscoveryClientForConfig(cluster.Config)
	if err != nil {
		t.Fatal(err)
	}
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(disc))

	fixtures := append(loadFixtures(t, "testdata/seeds/*.yaml"), loadFixtures(t, "testdata/unknown-fields.yaml")...)
	for _, f := range fixtures {
		t.Run(f.name(), func(t *testing.T) {
			gvk := f.obj.GroupVersionKind()
			mapping, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
			if err != nil {
				t.Fatalf("mapping %s: %v", gvk, err)
			}
			var client dynamic.ResourceInterface = dyn.Resource(mapping.Resource)
			in := f.obj.DeepCopy()
			if mapping.Scope.Name() == "namespace" {
				in.SetNamespace(ns)
				client = dyn.Resource(mapping.Resource).Namespace(ns)
			} else {
				in.SetNamespace("")
			}
			want := comparable(in)

			created, err := client.Create(ctx, &unstructured.Unstructured{Object: comparable(in)}, metav1.CreateOptions{})
			if err != nil {
				t.Fatalf("create: %v", err)
			}
			t.Cleanup(func() {
				// Drop finalizers (no controller runs here to honour them) so the
				// namespace can go away.
				_, _ = client.Patch(context.Background(), in.GetName(), types.MergePatchType,
					[]byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{})
				_ = client.Delete(context.Background(), in.GetName(), metav1.DeleteOptions{})
			})
			status, hasStatus := want["status"]
			if hasStatus && hasStatusSubresource(gvk.Kind) {
				created.Object["status"] = status
				if _, err := client.UpdateStatus(ctx, created, metav1.UpdateOptions{}); err != nil {
					t.Fatalf("update status: %v", err)
				}
			}

			got, err := client.Get(ctx, in.GetName(), metav1.GetOptions{})
			if err != nil {
				t.Fatalf("get: %v", err)
			}
			read := comparable(got)
			withoutDefaults := removeSchemaDefaults(want, read)
			if diff := cmp.Diff(want, withoutDefaults); diff != "" {
				t.Errorf("read back differs from what was written (-written +read):\n%s", diff)
			}
			checkTypedDecode(t, got, !strings.Contains(f.file, "unknown"))
		})
	}
}

// schemaDefaults are the only fields the API server may add: defaults that
// the pod template schema declares, as it does for a Deployment.
var schemaDefaults = map[string]any{"protocol": "TCP"}

// removeSchemaDefaults returns a copy of read without the schemaDefaults
// fields that written does not have.
func removeSchemaDefaults(written, read any) any {
	switch r := read.(type) {
	case map[string]any:
		w, _ := written.(map[string]any)
		out := map[string]any{}
		for k, v := range r {
			if _, ok := w[k]; !ok && schemaDefaults[k] == v {
				continue
			}
			out[k] = removeSchemaDefaults(w[k], v)
		}
		return out
	case []any:
		w, _ := written.([]any)
		out := make([]any, len(r))
		for i, v := range r {
			var wi any
			if i < len(w) {
				wi = w[i]
			}
			out[i] = removeSchemaDefaults(wi, v)
		}
		return out
	}
	return read
}

// hasStatusSubresource lists the kinds whose status is written through
// /status, as in Argo Rollouts and Argo CD's ApplicationSet; Argo CD keeps
// Application status in the main resource.
func hasStatusSubresource(kind string) bool {
	return kind == "Rollout" || kind == "AnalysisRun" || kind == "ApplicationSet"
}

// checkTypedDecode decodes a stored object into Skiff's Go types. Every field
// the Go types produce must be in the stored object; when modelsAll, every
// stored field must also be modelled (the seeds use only fields Skiff knows).
func checkTypedDecode(t *testing.T, stored *unstructured.Unstructured, modelsAll bool) {
	t.Helper()
	scheme, err := kubeclient.NewScheme()
	if err != nil {
		t.Fatal(err)
	}
	typed, err := scheme.New(stored.GroupVersionKind())
	if err != nil {
		t.Fatalf("no Go type for %s: %v", stored.GroupVersionKind(), err)
	}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(stored.Object, typed); err != nil {
		t.Fatalf("decoding into %T: %v", typed, err)
	}
	// Through JSON, as a client does, so custom marshalling takes part.
	js, err := json.Marshal(typed)
	if err != nil {
		t.Fatal(err)
	}
	var back map[string]any
	if err := json.Unmarshal(js, &back); err != nil {
		t.Fatal(err)
	}
	var storedPlain map[string]any
	js, _ = json.Marshal(stored.Object)
	_ = json.Unmarshal(js, &storedPlain)
	for _, p := range missingLeaves(back, storedPlain, "") {
		t.Errorf("Go types produce %s, which the stored object does not have", p)
	}
	if modelsAll {
		for _, p := range missingLeaves(storedPlain, back, "") {
			t.Errorf("Go types drop %s", p)
		}
	}
}

// missingLeaves lists the paths of non-empty leaves of a that b lacks or
// holds with another value. Scalars compare by their text, since a number
// written by a user is a string in some Go fields (AnyString).
func missingLeaves(a, b any, path string) []string {
	switch av := a.(type) {
	case map[string]any:
		bv, _ := b.(map[string]any)
		var out []string
		for k, e := range av {
			out = append(out, missingLeaves(e, bv[k], path+"."+k)...)
		}
		return out
	case []any:
		bv, _ := b.([]any)
		var out []string
		for i, e := range av {
			var be any
			if i < len(bv) {
				be = bv[i]
			}
			out = append(out, missingLeaves(e, be, fmt.Sprintf("%s[%d]", path, i))...)
		}
		return out
	case nil:
		return nil
	default:
		if isZero(av) {
			return nil
		}
		if b == nil || fmt.Sprint(av) != fmt.Sprint(b) {
			return []string{fmt.Sprintf("%s=%v (other side: %v)", path, av, b)}
		}
		return nil
	}
}

func isZero(v any) bool {
	switch v := v.(type) {
	case string:
		return v == ""
	case bool:
		return !v
	case float64:
		return v == 0
	}
	return false
}
