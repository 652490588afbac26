#!/usr/bin/env bash
# Installs the tools the build needs into a versioned cache directory and
# prints the path of the one asked for. Idempotent: a cached tool is reused.
#   hack/tools.sh golangci-lint    prints the path of the cached golangci-lint
#   hack/tools.sh awscli           installs the AWS CLI (Debian's awscli) if missing
#   hack/tools.sh pre-commit       installs pre-commit (Debian's package) if missing
#   hack/tools.sh chromium         installs Chromium (Debian's package) if missing
#   hack/tools.sh promtool         prints the path of the cached promtool (the
#                                  alerting rules' tests)
#   hack/tools.sh goreleaser | ko | crane | cyclonedx-gomod | krew
#                                  prints the path of the cached release tool
#   hack/tools.sh release          builds the five and prints a directory that
#                                  holds them by their plain names, for the PATH
set -euo pipefail

GOLANGCI_LINT_VERSION=v2.15.0
# promtool tests deploy/prometheus's alerting rules; the Prometheus module's
# versions are v0.x of the Prometheus 3.x releases.
PROMTOOL_VERSION=v0.316.0
# The release tools, pinned; built from source through the Go module proxy.
GORELEASER_VERSION=v2.16.0
KO_VERSION=v0.19.1
CRANE_VERSION=v0.22.1
CYCLONEDX_GOMOD_VERSION=v1.10.0
KREW_VERSION=v0.4.3
CACHE="${FARGATEKIT_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/fargatekit}"
BIN="$CACHE/bin"
mkdir -p "$BIN"

# gotool NAME PACKAGE VERSION [BUILD-FLAGS]: builds PACKAGE@VERSION once into
# $BIN and prints the path.
gotool() {
	local tool="$BIN/$1-$3"
	if [ ! -x "$tool" ]; then
		echo "hack/tools.sh: building $1 $3 into $BIN (once)" >&2
		local tmp
		tmp=$(mktemp -d)
		GOBIN="$tmp" GOFLAGS="${4:-}" go install "$2@$3"
		mv "$tmp/$(basename "${2%/v[0-9]*}")" "$tool"
		rmdir "$tmp"
	fi
	echo "$tool"
}

# debian COMMAND PACKAGE: installs Debian's PACKAGE unless COMMAND is on the
# PATH, and prints the command's path.
debian() {
	if ! command -v "$1" >/dev/null 2>&1; then
		echo "hack/tools.sh: installing $2 (Debian package)" >&2
		if [ "$(id -u)" -ne 0 ]; then
			echo "hack/tools.sh: root is needed to install $2: sudo apt-get install -y $2" >&2
			exit 1
		fi
		apt-get update -qq >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$2" >&2
	fi
	command -v "$1"
}

case "${1:-}" in
golangci-lint) gotool golangci-lint github.com/golangci/golangci-lint/v2/cmd/golangci-lint "$GOLANGCI_LINT_VERSION" ;;
# Without the service discoveries (Prometheus's remove_all_sd tag), which
# promtool test rules does not use: half the build time.
promtool) gotool promtool github.com/prometheus/prometheus/cmd/promtool "$PROMTOOL_VERSION" -tags=remove_all_sd ;;
goreleaser) gotool goreleaser github.com/goreleaser/goreleaser/v2 "$GORELEASER_VERSION" ;;
ko) gotool ko github.com/google/ko "$KO_VERSION" ;;
crane) gotool crane github.com/google/go-containerregistry/cmd/crane "$CRANE_VERSION" ;;
cyclonedx-gomod) gotool cyclonedx-gomod github.com/CycloneDX/cyclonedx-gomod/cmd/cyclonedx-gomod "$CYCLONEDX_GOMOD_VERSION" ;;
krew) gotool krew sigs.k8s.io/krew/cmd/krew "$KREW_VERSION" ;;
release)
	dir="$BIN/release"
	mkdir -p "$dir"
	for t in goreleaser ko crane cyclonedx-gomod krew; do
		ln -sfn "$("$0" "$t")" "$dir/$t"
	done
	echo "$dir"
	;;
# The emulator's tests drive the real AWS CLI against the emulated EKS API.
awscli) debian aws awscli ;;
# The release tests run the hook of .pre-commit-hooks.yaml with it.
pre-commit) debian pre-commit pre-commit ;;
# The tests of the HTML reports open them in headless Chromium.
chromium) debian chromium chromium ;;
*)
	echo "usage: hack/tools.sh golangci-lint | promtool | awscli | pre-commit | chromium | goreleaser | ko | crane | cyclonedx-gomod | krew | release" >&2
	exit 2
	;;
esac
