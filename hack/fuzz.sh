#!/usr/bin/env bash
# Runs every fuzz target for FUZZTIME each (default 30s).
set -euo pipefail
cd "$(dirname "$0")/.."
time=${FUZZTIME:-30s}
for pkg in $(go list ./...); do
	for target in $(go test -list '^Fuzz' "$pkg" | grep '^Fuzz' || true); do
		echo "== $pkg $target"
		go test "$pkg" -run '^$' -fuzz "^$target\$" -fuzztime "$time"
	done
done
