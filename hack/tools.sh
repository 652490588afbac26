#!/usr/bin/env bash
# Installs the tools the build needs into a versioned cache directory and
# prints the path of the one asked for. Idempotent: a cached tool is reused.
#   hack/tools.sh golangci-lint    prints the path of the cached golangci-lint
#   hack/tools.sh awscli           installs the AWS CLI (Debian's awscli) if missing
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
awscli)
	# The emulator's tests drive the real AWS CLI against the emulated EKS API.
	if ! command -v aws >/dev/null 2>&1; then
		echo "hack/tools.sh: installing awscli (Debian package)" >&2
		if [ "$(id -u)" -ne 0 ]; then
			echo "hack/tools.sh: root is needed to install awscli: sudo apt-get install -y awscli" >&2
			exit 1
		fi
		apt-get update -qq >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq awscli >&2
	fi
	command -v aws
	;;
*)
	echo "usage: hack/tools.sh golangci-lint | awscli" >&2
	exit 2
	;;
esac
