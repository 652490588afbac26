#!/usr/bin/env bash
# Runs golangci-lint with .golangci.yml.
set -euo pipefail
cd "$(dirname "$0")/.."
# CI's log says where its time goes.
trap 'echo "$0: ${SECONDS}s" >&2' EXIT
lint=$(hack/tools.sh golangci-lint)
"$lint" run ./...
