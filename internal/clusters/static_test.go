package clusters

import (
	"errors"
	"testing"

	"github.com/skiffcd/skiff/api/v1alpha1"
)

func TestResolve(t *testing.T) {
	east := Cluster{Name: "east", Server: "https://east.example:6443"}
	known := []Cluster{InCluster(), east}
	tests := map[string]struct {
		dest    v1alpha1.ApplicationDestination
		want    string
		missing bool
	}{
		"the local server is the in-cluster entry":        {dest: v1alpha1.ApplicationDestination{Server: InClusterServer}, want: InClusterName},
		"the local name is the in-cluster entry":          {dest: v1alpha1.ApplicationDestination{Name: InClusterName}, want: InClusterName},
		"a server with a trailing slash is the same":      {dest: v1alpha1.ApplicationDestination{Server: "https://east.example:6443/"}, want: "east"},
		"a registered cluster is found by name":           {dest: v1alpha1.ApplicationDestination{Name: "east"}, want: "east"},
		"server and name of the same cluster resolve":     {dest: v1alpha1.ApplicationDestination{Server: "https://east.example:6443", Name: "east"}, want: "east"},
		"server and name of different clusters fail":      {dest: v1alpha1.ApplicationDestination{Server: "https://east.example:6443", Name: InClusterName}, missing: true},
		"an unknown server is not found":                  {dest: v1alpha1.ApplicationDestination{Server: "https://west.example:6443"}, missing: true},
		"an unknown name is not found":                    {dest: v1alpha1.ApplicationDestination{Name: "west"}, missing: true},
		"a destination without server nor name is absent": {dest: v1alpha1.ApplicationDestination{Namespace: "x"}, missing: true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := Resolve(known, tc.dest)
			if tc.missing {
				if !errors.Is(err, ErrNotFound) {
					t.Fatalf("Resolve() = %v, %v; want ErrNotFound", got.Name, err)
				}
				return
			}
			if err != nil || got.Name != tc.want {
				t.Fatalf("Resolve() = %q, %v; want %q", got.Name, err, tc.want)
			}
		})
	}
}

func TestStaticTellsSubscribersOfSet(t *testing.T) {
	reg := NewStatic()
	calls := 0
	reg.Subscribe(func() { calls++ })
	reg.Set(Cluster{Name: "east", Server: "https://east.example"})
	if calls != 1 {
		t.Fatalf("subscriber called %d times, want 1", calls)
	}
	if _, err := reg.Resolve(v1alpha1.ApplicationDestination{Name: "east"}); err != nil {
		t.Fatalf("east not resolved after Set: %v", err)
	}
	if len(reg.List()) != 2 {
		t.Fatalf("List() has %d clusters, want the in-cluster entry and east", len(reg.List()))
	}
}
