package testcluster

import "path/filepath"

// ArgoRolloutsVersion is the Argo Rollouts release whose controller the
// Rollout takeover tests run. It must match hack/tools/argo-rollouts/go.mod
// (a test checks that it does).
const ArgoRolloutsVersion = "v1.10.2"

// EnsureArgoRolloutsController returns the path of Argo Rollouts'
// controller (cmd/rollouts-controller), building it with
// `hack/cluster-bins.sh argo-rollouts` when it is not in the cache yet. The
// first build fetches a newer Go toolchain and takes several minutes.
func EnsureArgoRolloutsController() (string, error) {
	return cachedTool(filepath.Join("argo-rollouts-"+ArgoRolloutsVersion, "rollouts-controller"), "argo-rollouts")
}
