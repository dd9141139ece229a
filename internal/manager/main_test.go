package manager

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/skiffcd/skiff/internal/crds"
	"github.com/skiffcd/skiff/internal/testcluster"
)

var cluster *testcluster.Cluster

func TestMain(m *testing.M) {
	os.Exit(testcluster.RunMain(m, func(c *testcluster.Cluster) {
		cluster = c
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := crds.Install(ctx, c.Config, time.Minute); err != nil {
			panic(err)
		}
	}))
}
