#!/usr/bin/env bash
# Runs the benchmarks quoted in docs/benchmarks.md.
set -euo pipefail
cd "$(dirname "$0")/.."
GOMAXPROCS=1 go test -run '^$' -bench . -benchmem -count "${COUNT:-5}" ./internal/cli/checkcmd/ ./internal/manifest/ ./pkg/fargate/ ./internal/spreadserver/
# scan on an emulated cluster of 5,020 pods, 1,000 Fargate pods at once,
# spread's admissions, memory at 5,000 Fargate pods and watch's latency need the control plane: with FARGATEKIT_CONTROLPLANE set
# (hack/build-controlplane.sh -q), they run too.
if [ -n "${FARGATEKIT_CONTROLPLANE:-}" ]; then
	go test -run '^$' -bench BenchmarkScan -benchtime 5x -count 1 -timeout 30m ./internal/emulator/
	go test -run '^$' -bench BenchmarkFargatePods -benchtime 1x -count 1 -timeout 30m ./internal/emulator/
	go test -run '^$' -bench BenchmarkSpreadAdmission -benchtime 500x -count 1 -timeout 30m ./internal/emulator/
	# KUBE_STATE_METRICS: a kube-state-metrics binary built by hand
	# (docs/benchmarks.md says how), measured beside watch.
	go test -run '^$' -bench BenchmarkFargateScale -benchtime 3x -count 1 -timeout 60m ./internal/emulator/
	go test -run '^$' -bench BenchmarkWatchProfileLatency -benchtime 20x -count 1 -timeout 30m ./internal/emulator/
fi
# check beside pluto and kube-linter (PLUTO and KUBE_LINTER: binaries built
# by hand; hack/compare.sh says how).
hack/compare.sh
