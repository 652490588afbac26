#!/usr/bin/env bash
# Runs golangci-lint with .golangci.yml.
set -euo pipefail
cd "$(dirname "$0")/.."
lint=$(hack/tools.sh golangci-lint)
"$lint" run ./...
