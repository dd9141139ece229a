package testcluster_test

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/skiffcd/skiff/internal/testcluster"
)

func TestGone(t *testing.T) {
	ctx := context.Background()
	ns := cluster.Namespace(t)
	c, err := client.New(cluster.Config, client.Options{Scheme: clientgoscheme.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	there := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "there", Namespace: ns}}
	if err := c.Create(ctx, there); err != nil {
		t.Fatal(err)
	}
	unknown := &unstructured.Unstructured{}
	unknown.SetAPIVersion("nowhere.skiff.io/v1")
	unknown.SetKind("Nothing")
	unknown.SetNamespace(ns)
	unknown.SetName("x")
	tests := map[string]struct {
		obj     client.Object
		wantErr string // "" when the condition holds
	}{
		"an object that was never created is gone": {
			obj: &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "never", Namespace: ns}},
		},
		"an object still there is not gone, and the condition says which": {
			obj:     there,
			wantErr: "*v1.ConfigMap " + ns + "/there is still there",
		},
		"a read that fails otherwise is what the condition saw": {
			obj:     unknown,
			wantErr: "no matches for kind",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			err := testcluster.Gone(c, tc.obj)()
			if tc.wantErr == "" {
				if err != nil {
					t.Errorf("Gone() = %v, want it to hold", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("Gone() = %v, want an error saying %q", err, tc.wantErr)
			}
		})
	}
	if err := c.Delete(ctx, there); err != nil {
		t.Fatal(err)
	}
	if err := testcluster.Gone(c, there)(); err != nil {
		t.Errorf("after the delete, Gone() = %v, want it to hold", err)
	}
}
