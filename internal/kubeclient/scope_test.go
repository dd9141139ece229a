package kubeclient

import (
	"errors"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// countingClient answers scope questions from a table and counts them.
type countingClient struct {
	client.Client
	namespaced map[string]bool // kind → namespaced; absent: not served
	asked      int
}

func (c *countingClient) GroupVersionKindFor(obj runtime.Object) (schema.GroupVersionKind, error) {
	return obj.GetObjectKind().GroupVersionKind(), nil
}

func (c *countingClient) IsObjectNamespaced(obj runtime.Object) (bool, error) {
	c.asked++
	ns, ok := c.namespaced[obj.GetObjectKind().GroupVersionKind().Kind]
	if !ok {
		return false, errors.New("no matches for kind")
	}
	return ns, nil
}

func object(kind string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("v1")
	u.SetKind(kind)
	return u
}

func TestScopeMemo(t *testing.T) {
	tests := map[string]struct {
		kinds      []string // asked in this order
		after      time.Duration
		wantAsked  int
		wantAnswer bool
		wantErr    bool
	}{
		"a kind asked twice is looked up once": {
			kinds: []string{"ConfigMap", "ConfigMap"}, wantAsked: 1, wantAnswer: true,
		},
		"each kind is looked up on its own": {
			kinds: []string{"Namespace", "ConfigMap", "Namespace"}, wantAsked: 2, wantAnswer: false,
		},
		"an answer older than a minute is looked up again": {
			kinds: []string{"ConfigMap", "ConfigMap"}, after: scopeTTL, wantAsked: 2, wantAnswer: true,
		},
		"a kind not served is asked every time": {
			kinds: []string{"Widget", "Widget"}, wantAsked: 2, wantErr: true,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			inner := &countingClient{namespaced: map[string]bool{"ConfigMap": true, "Namespace": false}}
			now := time.Date(2026, 12, 4, 0, 0, 0, 0, time.UTC)
			memo := NewScopeMemo(inner)
			memo.Now = func() time.Time { return now }
			var got bool
			var err error
			for i, kind := range tc.kinds {
				if i == len(tc.kinds)-1 {
					now = now.Add(tc.after)
				}
				got, err = memo.IsObjectNamespaced(object(kind))
			}
			if (err != nil) != tc.wantErr {
				t.Fatalf("error = %v, want error %v", err, tc.wantErr)
			}
			if got != tc.wantAnswer {
				t.Errorf("namespaced = %v, want %v", got, tc.wantAnswer)
			}
			if inner.asked != tc.wantAsked {
				t.Errorf("the mapper was asked %d times, want %d", inner.asked, tc.wantAsked)
			}
		})
	}
}
