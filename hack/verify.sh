#!/usr/bin/env bash
# Fails when a generated file or a golden file is out of date.
set -euo pipefail
cd "$(dirname "$0")/.."
status=0

tmp=$(mktemp)
gen=$(mktemp -d)
# CI's log says where its time goes.
trap 'rm -rf "$tmp" "$gen"; echo "$0: ${SECONDS}s" >&2' EXIT
# Everything here builds with the release's settings, as make build and the
# tests do (doccheck.BuildFlags): one compilation of the dependencies serves
# them all, and the release tests' builds come from the cache.
export CGO_ENABLED=0
flags=(-trimpath -tags kustomize_disable_go_plugin_support)
go run "${flags[@]}" ./cmd/fargatekit rules -o markdown > "$tmp"
if ! diff -u docs/rules.md "$tmp"; then
	echo "docs/rules.md is stale: run make generate" >&2
	status=1
fi

# The watch chart carries copies of the alerting rules and the dashboard
# (a chart cannot read files outside its directory).
for f in prometheus/fargatekit-rules.yaml grafana/fargatekit-dashboard.json; do
	if ! diff -u "deploy/$f" "deploy/charts/fargatekit-watch/files/${f#*/}"; then
		echo "deploy/charts/fargatekit-watch/files/${f#*/} is not deploy/$f: run make generate" >&2
		status=1
	fi
done

go run "${flags[@]}" ./hack/gendocs -man "$gen/man" -completions "$gen/completions"
# The man pages' .TH line carries the month they were written.
if ! diff -ru -I '^\.TH ' docs/man "$gen/man" || ! diff -ru completions "$gen/completions"; then
	echo "the man pages or completions are stale: run make docs" >&2
	status=1
fi

# The release builds six platforms; the tests run on one. Windows is the one
# system of the release that is not unix (process_other.go), and linux/arm64
# the other architecture of the image: builds for both catch code that only
# compiles on linux/amd64, and TestImage's arm64 image comes from the cache
# (darwin shares the unix code).
for target in windows/amd64 linux/arm64; do
	if ! GOOS=${target%/*} GOARCH=${target#*/} go build "${flags[@]}" -o /dev/null ./cmd/fargatekit; then
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
