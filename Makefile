# fargatekit — a thin Makefile; the work is in hack/.
GO ?= go
# The version a locally built image or release says it is.
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
IMAGE_LAYOUT ?= dist/image
# Kustomize's Go plugins are never loaded: without its plugin package the
# linker drops the exported methods nothing calls (a 50 MB smaller binary
# that starts in 50 MB less memory). .goreleaser.yaml and .ko.yaml set it too.
TAGS ?= kustomize_disable_go_plugin_support

.PHONY: all build demo test unit lint verify generate docs screenshots bench fuzz clean controlplane image release-snapshot

all: build

# A static binary with the release's flags: the tests and hack/verify.sh build
# with the same ones (doccheck.BuildFlags), so one build cache serves them all.
build: ## build bin/fargatekit as the release does
	CGO_ENABLED=0 $(GO) build -trimpath -tags='$(TAGS)' -o bin/fargatekit ./cmd/fargatekit

demo: build ## check the bundled examples
	hack/demo.sh

test: lint verify unit ## everything CI runs

unit: ## go test with the race detector; the emulator's integration tests run on the built control plane
	hack/test.sh

lint: ## golangci-lint (installed into the cache by hack/tools.sh)
	hack/lint.sh

verify: ## generated docs and golden files are up to date
	hack/verify.sh

generate: ## regenerate docs/rules.md and the watch chart's copies of the rules and dashboard
	hack/generate.sh

docs: ## regenerate the man pages (docs/man) and shell completions (completions/)
	$(GO) run ./hack/gendocs

screenshots: ## the pictures of the HTML reports in docs/img: check and plan of the examples, scan of the emulator (headless Chromium)
	hack/screenshots.sh

bench: ## the benchmarks of docs/benchmarks.md
	hack/bench.sh

fuzz: ## run every fuzz target for FUZZTIME (default 30s)
	hack/fuzz.sh

controlplane: ## build the control plane binaries for the emulator (cached)
	hack/build-controlplane.sh

image: ## the container image, built with ko (no Docker engine) into $(IMAGE_LAYOUT) as an OCI layout; KO_DEFAULTBASEIMAGE replaces the base
	VERSION=$(VERSION) KO_DOCKER_REPO=ghcr.io/fargatekit/fargatekit "$$(hack/tools.sh ko)" build --bare --push=false --oci-layout-path $(IMAGE_LAYOUT) ./cmd/fargatekit

release-snapshot: ## a release of every platform into dist/, with GoReleaser, not published
	PATH="$$(hack/tools.sh release):$$PATH" goreleaser release --snapshot --clean

clean:
	rm -rf bin dist
