#!/usr/bin/env bash
# Runs golangci-lint with .golangci.yml.
set -euo pipefail
cd "$(dirname "$0")/.."
# CI's log says where its time goes.
trap 'echo "$0: ${SECONDS}s" >&2' EXIT
lint=$(hack/tools.sh golangci-lint)
# The release's settings (doccheck.BuildFlags; the tags are in .golangci.yml),
# so that the build cache entries golangci-lint fills are the ones make
# build, the tests and the release use.
CGO_ENABLED=0 GOFLAGS=-trimpath "$lint" run ./...
