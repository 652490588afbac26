#!/usr/bin/env bash
# Before and after: runs fargatekit binaries in turn on the corpus of
# hack/compare.sh's pairs, each on one core and on two, ROUNDS times, and
# prints for each binary the medians of its rounds: the speed-up of two
# cores over one, the two-core time, the CPU time (user and system) of two
# cores over one, the cores the two-core run kept busy, and the largest
# resident size of all its runs. This machine's speed changes within
# minutes: binaries that run in turn share those changes, where runs of one
# then the other would not.
#
#	hack/alternate.sh 8 /tmp/before/fargatekit /tmp/after/fargatekit
#
# Build each binary as hack/compare.sh does (copied, not run where the
# linker wrote it). FILES (default 10000) is the corpus size in files of
# ten Deployments.
set -euo pipefail
if [ $# -lt 2 ]; then
	echo "usage: hack/alternate.sh ROUNDS BINARY..." >&2
	exit 2
fi
rounds=$1
shift
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
n=0
for bin in "$@"; do
	n=$((n + 1))
	cp "$bin" "$work/bin$n"
done
cd "$(dirname "$0")/.."
go run ./hack/corpus -files "${FILES:-10000}" -per-file 10 "$work/corpus"

# run N CORES: one run of binary N; prints its elapsed and CPU seconds, and
# keeps its largest resident size.
run() {
	GOMAXPROCS=$2 /usr/bin/time -f '%e %U %S %M' -o "$work/time" "$work/bin$1" check --fail-on none -o json "$work/corpus" > /dev/null
	tail -n 1 "$work/time" | tee -a "$work/rss$1" | awk '{ printf "%s %.2f\n", $1, $2 + $3 }'
}

for _ in $(seq "$rounds"); do
	for i in $(seq "$n"); do
		read -r one onecpu < <(run "$i" 1)
		read -r two twocpu < <(run "$i" 2)
		awk -v e1="$one" -v c1="$onecpu" -v e2="$two" -v c2="$twocpu" \
			'BEGIN { printf "%.3f %.2f %.3f %.3f\n", e1 / e2, e2, c2 / c1, c2 / e2 }' >> "$work/rounds$i"
	done
done

# median COLUMN FILE
median() {
	cut -d' ' -f"$1" "$2" | sort -n | awk '{ v[NR] = $1 } END { printf "%.2f", (v[int((NR + 1) / 2)] + v[int(NR / 2) + 1]) / 2 }'
}

echo "| binary | rounds | speed-up | 2 cores | CPU time, 2 cores / 1 core | cores busy | max resident |"
echo "| --- | --- | --- | --- | --- | --- | --- |"
i=0
for bin in "$@"; do
	i=$((i + 1))
	printf '| %s | %s | %s× | %s s | %s | %s | %d MB |\n' "$bin" "$rounds" "$(median 1 "$work/rounds$i")" "$(median 2 "$work/rounds$i")" \
		"$(median 3 "$work/rounds$i")" "$(median 4 "$work/rounds$i")" $(($(cut -d' ' -f4 "$work/rss$i" | sort -n | tail -n 1) / 1024))
done
