package crds_test

import (
	"context"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/skiffcd/skiff/internal/crds"
	"github.com/skiffcd/skiff/internal/testcluster"
)

var cluster *testcluster.Cluster

func TestMain(m *testing.M) {
	os.Exit(testcluster.RunMain(m, func(c *testcluster.Cluster) { cluster = c }))
}

var (
	installOnce sync.Once
	installErr  error
)

// installed installs the CRDs once per test binary.
func installed(t *testing.T) {
	t.Helper()
	installOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		installErr = crds.Install(ctx, cluster.Config, time.Minute)
	})
	if installErr != nil {
		t.Fatalf("installing CRDs: %v", installErr)
	}
}
