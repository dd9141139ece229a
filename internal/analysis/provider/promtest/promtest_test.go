package promtest

import (
	"testing"

	"github.com/skiffcd/skiff/internal/testcluster"
)

// A fresh machine has no prometheus on PATH: the tests must still get the
// real server (built from the module proxy into the binary cache) instead
// of failing.
func TestPrometheusStartsWithoutOneOnThePath(t *testing.T) {
	// Built (when missing) with the real PATH, which the build needs for go.
	if _, err := testcluster.PrometheusBinary(); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", t.TempDir())
	target := NewTarget(t)
	target.Set("skiff_test_gauge", 7)
	base := Start(t, target)
	WaitForValue(t, base, "skiff_test_gauge", 7)
}
