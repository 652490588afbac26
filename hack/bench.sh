#!/usr/bin/env bash
# Runs the benchmarks quoted in docs/benchmarks.md.
set -euo pipefail
cd "$(dirname "$0")/.."
GOMAXPROCS=1 go test -run '^$' -bench . -benchmem -count "${COUNT:-5}" ./internal/cli/checkcmd/ ./internal/manifest/ ./pkg/fargate/
