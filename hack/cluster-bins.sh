#!/usr/bin/env bash
# Builds the binaries of the local test control plane (etcd, kube-apiserver,
# kube-controller-manager, kube-scheduler, kwok), the tools the tests run
# against it (kubectl, Prometheus) and Argo Rollouts' controller (which the
# Rollout takeover tests run) from the Go module proxy.
#
# Usage: hack/cluster-bins.sh [control-plane] [test-tools] [argo-rollouts]
# With no argument it builds all three.
#
# Each tool has its own module under hack/tools/ so that the product's go.mod
# stays small. Binaries land in $SKIFF_CACHE_DIR/bin/<module>-<version>/
# (default $HOME/.cache/skiff), keyed by version, so only the first run pays
# the build (about 8 minutes on 2 cores for the control plane, as long again
# for Argo Rollouts). Prints the directories it filled.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cache=${SKIFF_CACHE_DIR:-$HOME/.cache/skiff}

# build <tools-module-dir> <module-path> <output-name> <package> ...
# The version comes from the tools module's go.mod, so bumping it there
# builds into a fresh cache directory. $BUILD_TAGS, when set, replaces the
# build tags (GOFLAGS' tags are the product's).
build() {
	local dir=$1 module=$2 name=$3
	shift 3
	local version
	version=$(cd "$root/hack/tools/$dir" && go list -m -f '{{.Version}}' "$module")
	local out="$cache/bin/$name-$version"
	mkdir -p "$out"
	for pkg in "$@"; do
		local bin
		bin=$(basename "$pkg")
		[ "$bin" = v3 ] && bin=etcd
		if [ -x "$out/$bin" ]; then
			continue
		fi
		echo "building $bin $version (first run only)" >&2
		local start=$SECONDS
		(cd "$root/hack/tools/$dir" && go build -trimpath ${BUILD_TAGS:+-tags=$BUILD_TAGS} -ldflags='-s -w' -o "$out/$bin.tmp.$$" "$pkg")
		mv "$out/$bin.tmp.$$" "$out/$bin"
		echo "built $bin in $((SECONDS - start))s" >&2
	done
	echo "$out"
}

control_plane() {
	build etcd go.etcd.io/etcd/server/v3 etcd go.etcd.io/etcd/server/v3
	build kubernetes k8s.io/kubernetes kubernetes \
		k8s.io/kubernetes/cmd/kube-apiserver \
		k8s.io/kubernetes/cmd/kube-controller-manager \
		k8s.io/kubernetes/cmd/kube-scheduler
	local kwok_dir
	kwok_dir=$(build kwok sigs.k8s.io/kwok kwok sigs.k8s.io/kwok/cmd/kwok)
	echo "$kwok_dir"

	# kwok refuses to start without stages; keep the ones shipped with this
	# version next to the binary.
	if [ ! -s "$kwok_dir/stages.yaml" ]; then
		local src
		src=$(cd "$root/hack/tools/kwok" && go list -m -f '{{.Dir}}' sigs.k8s.io/kwok)
		{
			for f in node/fast node/heartbeat pod/fast; do
				for y in "$src"/kustomize/stage/$f/*.yaml; do
					[ "$(basename "$y")" = kustomization.yaml ] && continue
					echo "---"
					cat "$y"
				done
			done
		} > "$kwok_dir/stages.yaml.tmp.$$"
		mv "$kwok_dir/stages.yaml.tmp.$$" "$kwok_dir/stages.yaml"
	fi
}

# kubectl of the control plane's version, for tests that drift objects as
# users do; the analysis tests' Prometheus, which scrapes static targets
# only, so no service discovery plugin is built in.
test_tools() {
	build kubernetes k8s.io/kubernetes kubernetes k8s.io/kubernetes/cmd/kubectl
	BUILD_TAGS=remove_all_sd build prometheus github.com/prometheus/prometheus prometheus \
		github.com/prometheus/prometheus/cmd/prometheus
}

# Argo Rollouts v1.10.2 asks for Go >= 1.26.10 in its go.mod, newer than
# the product's toolchain: this one build runs on go1.27.3, which the go
# command fetches once through the module proxy.
argo_rollouts() {
	GOTOOLCHAIN=go1.27.3 build argo-rollouts github.com/argoproj/argo-rollouts argo-rollouts \
		github.com/argoproj/argo-rollouts/cmd/rollouts-controller
}

parts=("$@")
[ ${#parts[@]} -gt 0 ] || parts=(control-plane test-tools argo-rollouts)
for part in "${parts[@]}"; do
	case $part in
	control-plane) control_plane ;;
	test-tools) test_tools ;;
	argo-rollouts) argo_rollouts ;;
	*)
		echo "unknown part $part; want control-plane, test-tools or argo-rollouts" >&2
		exit 2
		;;
	esac
done
