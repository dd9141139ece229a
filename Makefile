# Skiff's build. `make run` starts Skiff on a local control plane; `make test`
# runs every test against a real Kubernetes API. See README.md.

SHELL := bash
.SHELLFLAGS := -euo pipefail -c

VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
COMMIT ?= $(shell git rev-parse HEAD 2>/dev/null || echo unknown)
LDFLAGS := -X github.com/skiffcd/skiff/internal/version.Version=$(VERSION) \
	-X github.com/skiffcd/skiff/internal/version.Commit=$(COMMIT)

# Kustomize links Go's plugin package unless told not to; with it the linker
# keeps every exported symbol and method, and the binary (115 MB instead of
# 87) costs ~20 MiB more resident memory from its first instruction. Skiff
# does not load Go plugins. GOFLAGS reaches every go command below, the tests'
# own builds of cmd/skiff included.
GO_TAGS := kustomize_disable_go_plugin_support
GOFLAGS += -tags=$(GO_TAGS)
export GOFLAGS
# A static binary: Skiff calls no C, and linking libc (for the cgo DNS
# resolver and user lookups, which have pure-Go twins) maps it and the
# dynamic loader into the process, ~6 MiB more resident memory.
CGO_ENABLED ?= 0
export CGO_ENABLED

BIN := $(CURDIR)/bin
DEV_TOOLS := hack/tools/dev
CONTROLLER_GEN := $(BIN)/controller-gen
STATICCHECK := $(BIN)/staticcheck

# Tests may take long on a cold cache: the first run builds the control plane.
TEST_TIMEOUT ?= 60m
# The packages `make test` runs; narrow it while working on one
# (make test TEST_PACKAGES=./internal/rollout/...).
TEST_PACKAGES ?= ./...

.PHONY: all
all: build

.PHONY: build
build: ## Build bin/skiff.
	go build -ldflags '$(LDFLAGS)' -o $(BIN)/skiff ./cmd/skiff

# The image's creation time and its files' times: the commit's, so that
# `make image` on the same commit gives the same digest.
SOURCE_DATE_EPOCH ?= $(shell git log -1 --format=%ct 2>/dev/null || echo 0)

.PHONY: image
image: ## Build the container image (linux/amd64 and linux/arm64) into bin/image: an OCI layout and a docker tarball per platform; no Docker engine needed.
	go run ./hack/image -version '$(VERSION)' -commit '$(COMMIT)' -source-date-epoch '$(SOURCE_DATE_EPOCH)' -tags '$(GO_TAGS)' -out $(BIN)/image

.PHONY: cluster-bins
cluster-bins: ## Build the control plane, kubectl, Prometheus and Argo Rollouts' controller into the cache (first run only).
	hack/cluster-bins.sh >/dev/null

# `make run` seeds a local git repository with examples/ and creates its
# Applications; `make run DEMO=false` starts an empty Skiff.
DEMO ?= true

.PHONY: run
run: build cluster-bins ## Start a local control plane, skiff server on it and the demo apps; Ctrl-C stops everything.
	go run ./hack/devcluster --skiff $(BIN)/skiff --demo=$(DEMO) $(RUN_ARGS)

.PHONY: test-prereqs
test-prereqs: ## Install (or name the command that installs) what the tests need from the distribution: Chromium.
	hack/test-prereqs.sh

.PHONY: test
test: cluster-bins test-prereqs ## Run all tests against a real control plane.
	mkdir -p $(BIN)
	go test -count=1 -v -timeout $(TEST_TIMEOUT) $(TEST_PACKAGES) 2>&1 | tee $(BIN)/.test.log | grep -v '^=== \(RUN\|PAUSE\|CONT\)' || { echo "tests failed; full log in bin/.test.log"; exit 1; }

$(CONTROLLER_GEN): $(DEV_TOOLS)/go.mod
	cd $(DEV_TOOLS) && go build -o $@ sigs.k8s.io/controller-tools/cmd/controller-gen

$(STATICCHECK): $(DEV_TOOLS)/go.mod
	cd $(DEV_TOOLS) && go build -o $@ honnef.co/go/tools/cmd/staticcheck

.PHONY: generate
generate: $(CONTROLLER_GEN) ## Regenerate deepcopy code and CRDs from api/.
	$(CONTROLLER_GEN) object paths=./api/...
	rm -f config/crd/bases/*.yaml
	$(CONTROLLER_GEN) crd:maxDescLen=0,generateEmbeddedObjectMeta=true paths=./api/... output:crd:artifacts:config=config/crd/bases

.PHONY: verify-generate
verify-generate: generate ## Fail when generated files differ from what is committed.
	@if [ -n "$$(git status --porcelain -- api config/crd)" ]; then \
		echo "generated files are out of date; run 'make generate' and commit:"; \
		git status --porcelain -- api config/crd; git diff --stat -- api config/crd; exit 1; \
	fi

# The image tag in the committed manifests; a release sets its version
# (make manifests IMAGE_TAG=v1.2.3).
IMAGE_TAG ?= latest

.PHONY: manifests
manifests: ## Regenerate manifests/install.yaml, namespace-install.yaml and ha/install.yaml from the kustomize tree under manifests/.
	go run ./hack/manifests -image-tag $(IMAGE_TAG)

.PHONY: verify-manifests
verify-manifests: ## Fail when the generated manifests differ from what is committed.
	go run ./hack/manifests -verify

.PHONY: lint
lint: $(STATICCHECK) ## gofmt, go vet, staticcheck and the import rules between layers (hack/layering).
	@out=$$(gofmt -l .); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	go vet ./...
	$(STATICCHECK) ./...
	go run ./hack/layering

.PHONY: bench
bench: ## Run the benchmarks in bench/ and print their figures.
	go run ./bench/render
	go run ./bench/compare
	go run ./bench/apps -n 50,200

.PHONY: tidy
tidy:
	go mod tidy
