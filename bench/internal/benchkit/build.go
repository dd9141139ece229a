package benchkit

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// buildTags are the Makefile's GO_TAGS, and GoBuild sets its CGO_ENABLED:
// the benchmark measures the binary `make build` makes.
const buildTags = "kustomize_disable_go_plugin_support"

// GoBuild is `go build` of ./cmd/skiff into bin, as `make build` runs it.
func GoBuild(bin string) *exec.Cmd {
	build := exec.Command("go", "build", "-tags", buildTags, "-o", bin, "./cmd/skiff")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	return build
}

// BuildSkiff builds ./cmd/skiff into tmp. When the working tree does not
// compile (others edit the same checkout), it builds the committed tree
// (git archive HEAD) instead and says so.
func BuildSkiff(tmp string) (string, error) {
	bin := filepath.Join(tmp, "skiff")
	fmt.Printf("building skiff into %s\n", bin)
	build := GoBuild(bin)
	out, err := build.CombinedOutput()
	if err == nil {
		return bin, nil
	}
	fmt.Printf("the working tree does not build (%v):\n%s\nbuilding the committed tree (git archive HEAD) instead\n", err, Truncate(string(out), 2000))
	src := filepath.Join(tmp, "src")
	if err := os.MkdirAll(src, 0o755); err != nil {
		return "", err
	}
	archive := exec.Command("sh", "-c", "git archive HEAD | tar -x -C "+src)
	if out, err := archive.CombinedOutput(); err != nil {
		return "", fmt.Errorf("git archive HEAD: %w\n%s", err, out)
	}
	rev, _ := exec.Command("git", "rev-parse", "--short", "HEAD").Output()
	build = GoBuild(bin)
	build.Dir = src
	if out, err := build.CombinedOutput(); err != nil {
		return "", fmt.Errorf("building skiff at HEAD: %w\n%s", err, out)
	}
	fmt.Printf("built skiff from HEAD %s\n", strings.TrimSpace(string(rev)))
	return bin, nil
}
