package testcluster_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// `make test` on a fresh checkout, where bin/ does not exist yet, runs the
// tests and writes their log instead of failing on the log file.
func TestMakeTestRunsWhereBinDoesNotExistYet(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "fresh", "bin")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "make", "-C", filepath.Join("..", ".."), "test",
		"BIN="+bin, "TEST_PACKAGES=./internal/digest")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("make test: %v\n%s", err, out)
	}
	log, err := os.ReadFile(filepath.Join(bin, ".test.log"))
	if err != nil {
		t.Fatalf("make test wrote no log: %v\n%s", err, out)
	}
	if !strings.Contains(string(log), "ok  \tgithub.com/skiffcd/skiff/internal/digest") {
		t.Errorf("the log does not show the package's tests passing:\n%s", log)
	}
}
