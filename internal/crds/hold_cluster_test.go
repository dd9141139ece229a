package crds_test

import (
	"context"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/yaml"

	"github.com/skiffcd/skiff/internal/crds"
)

// The API server holds every create of a kind for two seconds while the
// kind is less than two seconds Established. Once WaitServed returns, the
// first create must not be held: it is what a user's first `kubectl apply`
// of Applications meets after `skiff server --install-crds` is ready.
func TestWaitServedReturnsOnceCreatesAreNoLongerHeld(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var crd apiextensionsv1.CustomResourceDefinition
	if err := yaml.Unmarshal([]byte(widgetCRD), &crd); err != nil {
		t.Fatal(err)
	}
	cs, err := apiextensionsclient.NewForConfig(cluster.Config)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cs.ApiextensionsV1().CustomResourceDefinitions().Create(ctx, &crd, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating the CRD: %v", err)
	}
	t.Cleanup(func() {
		_ = cs.ApiextensionsV1().CustomResourceDefinitions().Delete(context.Background(), crd.Name, metav1.DeleteOptions{})
	})
	if err := crds.WaitServed(ctx, cluster.Config, []*apiextensionsv1.CustomResourceDefinition{&crd}, time.Minute); err != nil {
		t.Fatal(err)
	}

	dyn, err := dynamic.NewForConfig(cluster.Config)
	if err != nil {
		t.Fatal(err)
	}
	widget := &unstructured.Unstructured{}
	widget.SetAPIVersion("test.skiff.io/v1")
	widget.SetKind("Widget")
	widget.SetName("first")
	started := time.Now()
	if _, err := dyn.Resource(schema.GroupVersionResource{Group: "test.skiff.io", Version: "v1", Resource: "widgets"}).
		Namespace("default").Create(ctx, widget, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating the first Widget: %v", err)
	}
	// A held create takes the whole hold (2 s); an unheld one milliseconds.
	if took := time.Since(started); took >= time.Second {
		t.Errorf("the first create after WaitServed took %s: the API server still held it", took)
	}
}

const widgetCRD = `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.test.skiff.io
spec:
  group: test.skiff.io
  scope: Namespaced
  names: {plural: widgets, singular: widget, kind: Widget, listKind: WidgetList}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}
`
