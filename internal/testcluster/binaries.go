package testcluster

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Versions of the control plane components. They must match the tools
// modules under hack/tools (a test checks that they do).
const (
	EtcdVersion       = "v3.6.16"
	KubernetesVersion = "v1.37.2"
	KwokVersion       = "v0.8.0"
	// PrometheusVersion is the Prometheus module version (v0.316.0 is
	// Prometheus 3.16.0) that the analysis tests query.
	PrometheusVersion = "v0.316.0"
)

// Binaries are the paths of the programs a Cluster runs.
type Binaries struct {
	Etcd, APIServer, ControllerManager, Scheduler, Kwok string
	// KwokStages is a YAML file with the Stage documents kwok needs to
	// make nodes Ready and pods Running.
	KwokStages string
}

// CacheDir is where built binaries are kept: $SKIFF_CACHE_DIR, or
// $HOME/.cache/skiff.
func CacheDir() (string, error) {
	if dir := os.Getenv("SKIFF_CACHE_DIR"); dir != "" {
		return dir, nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("finding the binary cache: %w", err)
	}
	return filepath.Join(home, ".cache", "skiff"), nil
}

// binariesIn returns the paths of the binaries under cacheDir, whether or not
// they exist.
func binariesIn(cacheDir string) Binaries {
	bin := filepath.Join(cacheDir, "bin")
	kube := filepath.Join(bin, "kubernetes-"+KubernetesVersion)
	kwok := filepath.Join(bin, "kwok-"+KwokVersion)
	return Binaries{
		Etcd:              filepath.Join(bin, "etcd-"+EtcdVersion, "etcd"),
		APIServer:         filepath.Join(kube, "kube-apiserver"),
		ControllerManager: filepath.Join(kube, "kube-controller-manager"),
		Scheduler:         filepath.Join(kube, "kube-scheduler"),
		Kwok:              filepath.Join(kwok, "kwok"),
		KwokStages:        filepath.Join(kwok, "stages.yaml"),
	}
}

func (b Binaries) missing() []string {
	var missing []string
	for _, p := range []string{b.Etcd, b.APIServer, b.ControllerManager, b.Scheduler, b.Kwok, b.KwokStages} {
		if _, err := os.Stat(p); err != nil {
			missing = append(missing, p)
		}
	}
	return missing
}

// EnsureBinaries returns the cached binaries, building the missing ones with
// hack/cluster-bins.sh from the Skiff checkout that contains the working
// directory. The first build takes several minutes; later calls are instant.
func EnsureBinaries() (Binaries, error) {
	cache, err := CacheDir()
	if err != nil {
		return Binaries{}, err
	}
	bins := binariesIn(cache)
	if len(bins.missing()) == 0 {
		return bins, nil
	}
	script, err := runBuildScript(cache, "control-plane")
	if err != nil {
		return Binaries{}, fmt.Errorf("control plane binaries missing (%s): %w", strings.Join(bins.missing(), ", "), err)
	}
	if missing := bins.missing(); len(missing) > 0 {
		return Binaries{}, fmt.Errorf("%s ran but these are still missing: %s", script, strings.Join(missing, ", "))
	}
	return bins, nil
}

// PrometheusBinary returns the cached Prometheus server, built from the Go
// module proxy by `hack/cluster-bins.sh test-tools` when it is missing, so
// that the analysis tests run the same Prometheus on every machine.
func PrometheusBinary() (string, error) {
	return cachedTool(filepath.Join("prometheus-"+PrometheusVersion, "prometheus"), "test-tools")
}

// KubectlBinary returns the cached kubectl of the control plane's version,
// for tests that change objects the way users do (kubectl scale, edit,
// patch: other field managers than Skiff's).
func KubectlBinary() (string, error) {
	return cachedTool(filepath.Join("kubernetes-"+KubernetesVersion, "kubectl"), "test-tools")
}

// cachedTool returns the path of a binary under the cache's bin directory,
// building part of hack/cluster-bins.sh when it is missing.
func cachedTool(rel, part string) (string, error) {
	cache, err := CacheDir()
	if err != nil {
		return "", err
	}
	bin := filepath.Join(cache, "bin", rel)
	if _, err := os.Stat(bin); err == nil {
		return bin, nil
	}
	script, err := runBuildScript(cache, part)
	if err != nil {
		return "", fmt.Errorf("%s is missing: %w", bin, err)
	}
	if _, err := os.Stat(bin); err != nil {
		return "", fmt.Errorf("`bash %s %s` ran but %s is still missing", script, part, bin)
	}
	return bin, nil
}

// runBuildScript runs hack/cluster-bins.sh for the given parts, building
// into cache, and returns the script's path.
func runBuildScript(cache string, parts ...string) (string, error) {
	script, err := findBuildScript()
	if err != nil {
		return "", err
	}
	cmd := exec.Command("bash", append([]string{script}, parts...)...)
	cmd.Env = append(os.Environ(), "SKIFF_CACHE_DIR="+cache)
	cmd.Stdout = os.Stderr
	cmd.Stderr = os.Stderr
	if err := cmd.Run(); err != nil {
		return script, fmt.Errorf("building with `SKIFF_CACHE_DIR=%s bash %s %s`: %w", cache, script, strings.Join(parts, " "), err)
	}
	return script, nil
}

// findBuildScript walks up from the working directory to the checkout root.
func findBuildScript() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		script := filepath.Join(dir, "hack", "cluster-bins.sh")
		if _, err := os.Stat(script); err == nil {
			return script, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("hack/cluster-bins.sh not found above the working directory; run it from a Skiff checkout")
		}
		dir = parent
	}
}
