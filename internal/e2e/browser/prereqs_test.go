package browser

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// Without Chromium the browser tests fail with the command that installs it;
// a run that skipped them would pass and hide the UI tests.
func TestAMissingBrowserFailsTheRun(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "SKIFF_TEST_CHROMIUM="+t.TempDir()+"/no-chromium")
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 {
		t.Fatalf("the test binary without a browser ended with %v, want exit status 1; output:\n%s", err, out)
	}
	if !strings.Contains(string(out), installChromium) {
		t.Errorf("the output does not give the install command %q:\n%s", installChromium, out)
	}
}
