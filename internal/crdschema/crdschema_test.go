package crdschema

import (
	"context"
	"os"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/skiffcd/skiff/internal/diff"
	"github.com/skiffcd/skiff/internal/testwait"
)

func readYAML(t *testing.T, path string, into any) {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(raw, into); err != nil {
		t.Fatal(err)
	}
}

// A custom resource of a CRD Skiff does not ship, stored by the API server
// with its schema's default inside a list, is not a difference once the
// comparison reads the CRD; without the CRD's defaults it would be
// OutOfSync forever.
func TestTheClustersCRDDefaultsAreNotADifference(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c := cluster.Client(t)
	ext, err := apiextensionsclient.NewForConfig(cluster.Config)
	if err != nil {
		t.Fatal(err)
	}
	crds := ext.ApiextensionsV1().CustomResourceDefinitions()
	var crd apiextensionsv1.CustomResourceDefinition
	readYAML(t, "testdata/crd.yaml", &crd)
	if _, err := crds.Create(ctx, &crd, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = crds.Delete(context.Background(), crd.Name, metav1.DeleteOptions{}) })
	desired := &unstructured.Unstructured{}
	readYAML(t, "testdata/gateway.yaml", &desired.Object)
	desired.SetNamespace(cluster.Namespace(t))
	testwait.Eventually(t, "the Gateway CRD to be served", func() error {
		return c.Apply(ctx, client.ApplyConfigurationFromUnstructured(desired.DeepCopy()), client.FieldOwner(diff.FieldManager), client.ForceOwnership)
	}, testwait.Timeout(time.Minute), testwait.Interval(200*time.Millisecond))
	live := &unstructured.Unstructured{}
	live.SetGroupVersionKind(desired.GroupVersionKind())
	if err := c.Get(ctx, client.ObjectKeyFromObject(desired), live); err != nil {
		t.Fatal(err)
	}

	dyn, err := dynamic.NewForConfig(cluster.Config)
	if err != nil {
		t.Fatal(err)
	}
	source := New(dyn, c.RESTMapper())
	for name, tc := range map[string]struct {
		schemas  diff.Schemas
		modified bool
	}{
		"with the cluster's CRDs the default is predicted": {schemas: source, modified: false},
		// Shows the check can fail: the embedded CRDs know no Gateway.
		"with Skiff's CRDs only it is a difference": {schemas: nil, modified: true},
	} {
		t.Run(name, func(t *testing.T) {
			res, err := diff.Compare(desired, live, diff.Options{Schemas: tc.schemas})
			if err != nil {
				t.Fatal(err)
			}
			if res.Modified != tc.modified {
				t.Errorf("Modified = %v, want %v; diff:\n%s", res.Modified, tc.modified, res.Diff)
			}
		})
	}

	t.Run("a changed default is read again after the TTL", func(t *testing.T) {
		now := time.Now()
		s := New(dyn, c.RESTMapper())
		s.Now = func() time.Time { return now }
		gvk := desired.GroupVersionKind()
		if got := protocolDefault(s.DefaultsOf(gvk)); got != `"HTTP"` {
			t.Fatalf("default %s, want \"HTTP\"", got)
		}
		current, err := crds.Get(ctx, crd.Name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		listener := current.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"].Properties["listeners"].Items.Schema
		p := listener.Properties["protocol"]
		p.Default.Raw = []byte(`"HTTPS"`)
		listener.Properties["protocol"] = p
		if _, err := crds.Update(ctx, current, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		if got := protocolDefault(s.DefaultsOf(gvk)); got != `"HTTP"` {
			t.Errorf("within the TTL the default is %s, want the one read, \"HTTP\"", got)
		}
		now = now.Add(defaultTTL)
		if got := protocolDefault(s.DefaultsOf(gvk)); got != `"HTTPS"` {
			t.Errorf("after the TTL the default is %s, want \"HTTPS\"", got)
		}
	})
}

func protocolDefault(s *apiextensionsv1.JSONSchemaProps) string {
	if s == nil {
		return "<no defaults>"
	}
	p := s.Properties["spec"].Properties["listeners"].Items.Schema.Properties["protocol"]
	if p.Default == nil {
		return "<none>"
	}
	return string(p.Default.Raw)
}

func TestDefaultsWithoutTheCluster(t *testing.T) {
	rollout := schema.GroupVersionKind{Group: "argoproj.io", Version: "v1alpha1", Kind: "Rollout"}
	// A mapper that knows nothing stands for a cluster whose CRDs cannot be
	// read: a namespaced install may not.
	s := New(nil, meta.NewDefaultRESTMapper(nil))
	for name, tc := range map[string]struct {
		gvk  schema.GroupVersionKind
		want bool
	}{
		"a built-in kind has no CRD and is not looked up":              {gvk: schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}},
		"an argoproj.io kind gets the defaults of the CRD Skiff ships": {gvk: rollout, want: true},
		"another custom kind gets none":                                {gvk: schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Gateway"}},
	} {
		t.Run(name, func(t *testing.T) {
			if got := s.DefaultsOf(tc.gvk) != nil; got != tc.want {
				t.Errorf("defaults found = %v, want %v", got, tc.want)
			}
		})
	}
}
