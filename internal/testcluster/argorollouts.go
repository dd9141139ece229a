package testcluster

import (
	"fmt"
	"os"
	"path/filepath"
)

// ArgoRolloutsVersion is the Argo Rollouts release whose controller the
// Rollout takeover tests run. It must match hack/tools/argo-rollouts/go.mod
// (a test checks that it does).
const ArgoRolloutsVersion = "v1.10.2"

// EnsureArgoRolloutsController returns the path of Argo Rollouts'
// controller (cmd/rollouts-controller), building it with
// `hack/cluster-bins.sh argo-rollouts` when it is not in the cache yet. The
// first build fetches a newer Go toolchain and takes several minutes.
func EnsureArgoRolloutsController() (string, error) {
	cache, err := CacheDir()
	if err != nil {
		return "", err
	}
	bin := filepath.Join(cache, "bin", "argo-rollouts-"+ArgoRolloutsVersion, "rollouts-controller")
	if _, err := os.Stat(bin); err == nil {
		return bin, nil
	}
	script, err := runBuildScript(cache, "argo-rollouts")
	if err != nil {
		return "", fmt.Errorf("the controller of Argo Rollouts is missing (%s): %w", bin, err)
	}
	if _, err := os.Stat(bin); err != nil {
		return "", fmt.Errorf("`bash %s argo-rollouts` ran but %s is still missing", script, bin)
	}
	return bin, nil
}
