package manager

import (
	"os"
	"testing"

	"github.com/skiffcd/skiff/internal/testcluster"
)

var cluster *testcluster.Cluster

func TestMain(m *testing.M) {
	manyManagersPerProcess = true
	os.Exit(testcluster.RunMainWithCRDs(m, func(c *testcluster.Cluster) { cluster = c }))
}
