# fargatekit — a thin Makefile; the work is in hack/.
GO ?= go

.PHONY: all build demo test unit lint verify generate bench fuzz clean controlplane

all: build

build: ## build bin/fargatekit
	$(GO) build -o bin/fargatekit ./cmd/fargatekit

demo: build ## check the bundled examples
	hack/demo.sh

test: lint verify unit ## everything CI runs

unit: ## go test with the race detector; the emulator's integration tests run on the built control plane
	hack/test.sh

lint: ## golangci-lint (installed into the cache by hack/tools.sh)
	hack/lint.sh

verify: ## generated docs and golden files are up to date
	hack/verify.sh

generate: ## regenerate docs/rules.md
	hack/generate.sh

bench: ## the benchmarks of docs/benchmarks.md
	hack/bench.sh

fuzz: ## run every fuzz target for FUZZTIME (default 30s)
	hack/fuzz.sh

controlplane: ## build the control plane binaries for the emulator (cached)
	hack/build-controlplane.sh

clean:
	rm -rf bin
