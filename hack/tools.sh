#!/usr/bin/env bash
# Installs the tools the build needs into a versioned cache directory and
# prints the path of the one asked for. Idempotent: a cached tool is reused.
#   hack/tools.sh golangci-lint
set -euo pipefail

GOLANGCI_LINT_VERSION=v2.15.0
CACHE="${FARGATEKIT_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/fargatekit}"
BIN="$CACHE/bin"
mkdir -p "$BIN"

case "${1:-}" in
golangci-lint)
	tool="$BIN/golangci-lint-$GOLANGCI_LINT_VERSION"
	if [ ! -x "$tool" ]; then
		echo "hack/tools.sh: building golangci-lint $GOLANGCI_LINT_VERSION into $BIN (a few minutes, once)" >&2
		tmp=$(mktemp -d)
		GOBIN="$tmp" go install "github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$GOLANGCI_LINT_VERSION"
		mv "$tmp/golangci-lint" "$tool"
		rmdir "$tmp"
	fi
	echo "$tool"
	;;
*)
	echo "usage: hack/tools.sh golangci-lint" >&2
	exit 2
	;;
esac
