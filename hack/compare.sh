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
# PAIRS (default 5) is how many times check then runs on the largest corpus
# on one core and on two, for the speed-up of each pair and their median:
# this machine's speed changes by up to a third within minutes, and the two
# runs of a pair share theirs. The CPU time (user and system) of the two
# runs splits the speed-up in two: how many cores the two-core check kept
# busy, and how much more CPU time it took than the one-core check for the
# same work. Each pair also runs two checks at once on two cores in one
# process (hack/inprocess), which share no data, only the process, and two
# one-core checks at once, which share only the machine: twice the one-core
# time over the time of the two (of the slower, when apart) is what two
# cores give such work, to hold the first against. Odd pairs run in that
# order, even ones in the reverse, so that a machine slowing down favours
# none.
set -euo pipefail
cd "$(dirname "$0")/.."
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# fargatekit and hack/inprocess are built as a release is (.goreleaser.yaml).
# Every binary runs from a copy, as one installed from a release archive
# would. Run as the Go linker wrote it, fargatekit's pages of the executable
# took 64 MB of its resident size rather than 45 MB at 100,000 objects, 22 MB
# of them mapped in 2 MB pages (smaps' FilePmdMapped), on this machine's
# Linux 6.18 and ext4.
for name in cmd/fargatekit hack/inprocess; do
	go build -trimpath -ldflags "-s -w" -tags kustomize_disable_go_plugin_support -o "$work/built" "./$name"
	cp "$work/built" "$work/${name#*/}"
done
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
	rm -rf "${last:-}"
	last=$corpus # kept for the pairs below
done

# seconds COMMAND...: the elapsed time of a command and its CPU time (user
# and system), its output dropped; a command that fails says so.
seconds() {
	local time status=0
	time=$(mktemp -p "$work") # two may run at once
	/usr/bin/time -f '%e %U %S' -o "$time" "$@" > /dev/null 2> "$time.err" || status=$?
	if [ "$status" -ne 0 ]; then
		echo "compare.sh: $* exited with status $status:" >&2
		cat "$time.err" >&2
	fi
	tail -n 1 "$time" | awk '{ printf "%s %.2f\n", $1, $2 + $3 }'
}

# ratio A B [K]: K (default 1) times A over B, to two decimals.
ratio() {
	awk -v a="$1" -v b="$2" -v k="${3:-1}" 'BEGIN { printf "%.2f", k * a / b }'
}

# median FILE: the median of the numbers in FILE, one per line.
median() {
	sort -n "$1" | awk '{ v[NR] = $1 } END { printf "%.2f", (v[int((NR + 1) / 2)] + v[int(NR / 2) + 1]) / 2 }'
}

if [ "${PAIRS:-5}" -gt 0 ]; then
	echo
	echo "| pair, $objects objects | 1 core | 2 cores | speed-up | cores busy, 2 cores | CPU time, 2 cores / 1 core | two checks in one process, 2 cores | their speed-up | two 1-core checks at once | their speed-up |"
	echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"
	args=(check --fail-on none -o json "$last")
	check=("$work/fargatekit" "${args[@]}")
	# The steps of a pair; each sets the variables of its figures.
	single() { read -r one onecpu < <(GOMAXPROCS=1 seconds "${check[@]}"); }
	double() { read -r two twocpu < <(GOMAXPROCS=2 seconds "${check[@]}"); }
	shared() { read -r inprocess _ < <(GOMAXPROCS=2 seconds "$work/inprocess" 2 "${args[@]}"); }
	separate() {
		GOMAXPROCS=1 seconds "${check[@]}" > "$work/apart" &
		read -r other _ < <(GOMAXPROCS=1 seconds "${check[@]}")
		wait
		read -r apart _ < "$work/apart"
		apart=$(awk -v a="$apart" -v b="$other" 'BEGIN { printf "%.2f", (a > b ? a : b) }')
	}
	for pair in $(seq "${PAIRS:-5}"); do
		if ((pair % 2)); then
			single; double; shared; separate
		else
			separate; shared; double; single
		fi
		speedup=$(ratio "$one" "$two")
		busy=$(ratio "$twocpu" "$two")
		cpu=$(ratio "$twocpu" "$onecpu")
		together=$(ratio "$one" "$inprocess" 2)
		ceiling=$(ratio "$one" "$apart" 2)
		echo "$speedup" >> "$work/speedups"
		echo "$busy" >> "$work/busy"
		echo "$cpu" >> "$work/cpu"
		echo "$together" >> "$work/together"
		echo "$ceiling" >> "$work/ceilings"
		echo "| $pair | $one s | $two s | ${speedup}× | $busy | $cpu | $inprocess s | ${together}× | $apart s | ${ceiling}× |"
	done
	echo
	echo "medians: speed-up of two cores over one $(median "$work/speedups")×, cores busy $(median "$work/busy"), CPU time of two cores over one $(median "$work/cpu");" \
		"speed-up of two checks in one process $(median "$work/together")×, of two one-core checks at once $(median "$work/ceilings")×"
fi
