#!/usr/bin/env bash
# Side by side on the corpus of BenchmarkCheck (10 Deployments of 48 lines
# per file): fargatekit check -o json on two cores and on one, pluto
# detect-files -o json and kube-linter lint --format json, each timed with
# /usr/bin/time (elapsed seconds, largest resident size). The Go module
# proxy does not serve pluto or kube-linter: build them from source and name
# the binaries in PLUTO and KUBE_LINTER; without them only fargatekit runs.
# FILES lists the corpus sizes, in files (default: 1000 2000 10000);
# kube-linter runs up to KUBE_LINTER_MAX_FILES (default 2000): its time grows
# faster than its input (16 s at 1,000 files, 110 s at 2,000).
set -euo pipefail
cd "$(dirname "$0")/.."
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# fargatekit is built as a release is (.goreleaser.yaml). Every binary
# runs from a copy, as one installed from a release archive would. Run as the Go linker wrote it, fargatekit's pages of the executable
# took 64 MB of its resident size rather than 45 MB at 100,000 objects, 22 MB
# of them mapped in 2 MB pages (smaps' FilePmdMapped), on this machine's
# Linux 6.18 and ext4.
go build -trimpath -ldflags "-s -w" -tags kustomize_disable_go_plugin_support -o "$work/built" ./cmd/fargatekit
cp "$work/built" "$work/fargatekit"
for tool in PLUTO KUBE_LINTER; do
	if [ -n "${!tool:-}" ]; then
		cp "${!tool}" "$work/$tool"
		printf -v "$tool" '%s' "$work/$tool"
	fi
done

# measure NAME COMMAND...: one row of the table; a tool's exit code (1 when
# it finds something) is not a failure.
measure() {
	local name=$1
	shift
	/usr/bin/time -f '%e %M' -o "$work/time" "$@" > "$work/out" 2> /dev/null || true
	read -r seconds kb < <(tail -n 1 "$work/time") # after "Command exited with non-zero status N"
	printf '| %s | %s | %s | %s s | %d MB |\n' "$objects" "$name" "$(wc -c < "$work/out")" "$seconds" $((kb / 1024))
}

echo "| objects | command | output bytes | time | max resident |"
echo "| --- | --- | --- | --- | --- |"
for files in ${FILES:-1000 2000 10000}; do
	corpus=$work/corpus-$files
	go run ./hack/corpus -files "$files" -per-file 10 "$corpus"
	objects=$((files * 10))
	measure "fargatekit check (2 cores)" "$work/fargatekit" check --fail-on none -o json "$corpus"
	measure "fargatekit check (1 core)" env GOMAXPROCS=1 "$work/fargatekit" check --fail-on none -o json "$corpus"
	if [ -n "${PLUTO:-}" ]; then
		measure "pluto detect-files" "$PLUTO" detect-files -d "$corpus" -o json
	fi
	if [ -n "${KUBE_LINTER:-}" ] && [ "$files" -le "${KUBE_LINTER_MAX_FILES:-2000}" ]; then
		measure "kube-linter lint" "$KUBE_LINTER" lint --format json "$corpus"
	fi
	rm -rf "$corpus"
done
