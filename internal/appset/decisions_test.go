package appset

import (
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestDecisionResourceOf(t *testing.T) {
	tests := map[string]struct {
		configMap map[string]string
		want      schema.GroupVersionResource
		wantErr   bool
	}{
		"group/version and kind name the resource": {
			configMap: map[string]string{"apiVersion": "cluster.open-cluster-management.io/v1beta1", "kind": "placementdecisions"},
			want:      schema.GroupVersionResource{Group: "cluster.open-cluster-management.io", Version: "v1beta1", Resource: "placementdecisions"},
		},
		"an apiVersion without a group is an error": {
			configMap: map[string]string{"apiVersion": "v1", "kind": "configmaps"},
			wantErr:   true,
		},
		"a missing kind is an error": {
			configMap: map[string]string{"apiVersion": "a.example.com/v1"},
			wantErr:   true,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := DecisionResourceOf(tc.configMap)
			if (err != nil) != tc.wantErr {
				t.Fatalf("error %v, want error %v", err, tc.wantErr)
			}
			if got != tc.want {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}
