#!/usr/bin/env bash
# Fails when a generated file or a golden file is out of date.
set -euo pipefail
cd "$(dirname "$0")/.."
status=0

tmp=$(mktemp)
gen=$(mktemp -d)
trap 'rm -rf "$tmp" "$gen"' EXIT
go run ./cmd/fargatekit rules -o markdown > "$tmp"
if ! diff -u docs/rules.md "$tmp"; then
	echo "docs/rules.md is stale: run make generate" >&2
	status=1
fi

go run ./hack/gendocs -man "$gen/man" -completions "$gen/completions"
# The man pages' .TH line carries the month they were written.
if ! diff -ru -I '^\.TH ' docs/man "$gen/man" || ! diff -ru completions "$gen/completions"; then
	echo "the man pages or completions are stale: run make docs" >&2
	status=1
fi

# The release builds six platforms; the tests run on one. A build for the
# other systems catches code that only compiles on Linux.
for target in windows/amd64 darwin/arm64; do
	if ! GOOS=${target%/*} GOARCH=${target#*/} CGO_ENABLED=0 go build -tags kustomize_disable_go_plugin_support -o /dev/null ./cmd/fargatekit; then
		echo "fargatekit does not build for $target, a platform of the release" >&2
		status=1
	fi
done

unformatted=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))
if [ -n "$unformatted" ]; then
	echo "not gofmt-formatted: $unformatted" >&2
	status=1
fi

if ! go mod tidy -diff >/dev/null 2>&1; then
	echo "go.mod/go.sum are not tidy: run go mod tidy" >&2
	go mod tidy -diff >&2 || true
	status=1
fi
exit $status
