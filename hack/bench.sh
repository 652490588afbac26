#!/usr/bin/env bash
# Runs the benchmarks quoted in docs/benchmarks.md.
set -euo pipefail
cd "$(dirname "$0")/.."
GOMAXPROCS=1 go test -run '^$' -bench . -benchmem -count "${COUNT:-5}" ./internal/cli/checkcmd/ ./internal/manifest/ ./pkg/fargate/
# scan on an emulated cluster of 5,020 pods needs the control plane: with
# FARGATEKIT_CONTROLPLANE set (hack/build-controlplane.sh -q), it runs too.
if [ -n "${FARGATEKIT_CONTROLPLANE:-}" ]; then
	go test -run '^$' -bench BenchmarkScan -benchtime 5x -count 1 -timeout 30m ./internal/emulator/
fi
