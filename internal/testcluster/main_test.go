package testcluster_test

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/skiffcd/skiff/internal/testcluster"
)

var cluster *testcluster.Cluster

// orphanChildEnv makes the test binary start a cluster, print its process
// IDs and wait to be killed: the parent test checks nothing outlives it.
const orphanChildEnv = "SKIFF_TESTCLUSTER_ORPHAN_CHILD"

func TestMain(m *testing.M) {
	if os.Getenv(orphanChildEnv) == "1" {
		os.Exit(runOrphanChild())
	}
	os.Exit(testcluster.RunMain(m, func(c *testcluster.Cluster) { cluster = c }))
}

func runOrphanChild() int {
	c, err := testcluster.Start(context.Background(), testcluster.Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Printf("dir %s\n", c.Dir)
	for name, pid := range c.PIDs() {
		fmt.Printf("pid %d %s\n", pid, name)
	}
	fmt.Println("ready")
	// The parent kills us long before this; the bound keeps a stray child
	// from living forever.
	time.Sleep(3 * time.Minute)
	c.Stop()
	return 0
}
