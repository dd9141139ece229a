package clusters

import (
	"testing"

	"github.com/skiffcd/skiff/api/v1alpha1"
)

func TestStaticTellsSubscribersOfSet(t *testing.T) {
	reg := NewStatic()
	if _, err := reg.Resolve(v1alpha1.ApplicationDestination{Name: "east"}); err == nil {
		t.Fatal("east resolved before Set")
	}
	calls := 0
	reg.Subscribe(func() { calls++ })
	reg.Set(Cluster{Name: "east", Server: "https://east.example"})
	if calls != 1 {
		t.Fatalf("subscriber called %d times, want 1", calls)
	}
	if c, err := reg.Resolve(v1alpha1.ApplicationDestination{Name: "east"}); err != nil || c.Server != "https://east.example" {
		t.Fatalf("Resolve(east) after Set = %v, %v", c, err)
	}
	if c, err := reg.Resolve(v1alpha1.ApplicationDestination{Name: InClusterName}); err != nil || c.Server != InClusterServer {
		t.Fatalf("Resolve(in-cluster) = %v, %v; the in-cluster entry stays", c, err)
	}
}
