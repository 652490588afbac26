#!/usr/bin/env bash
# Before and after: runs fargatekit binaries in turn on the corpus of
# hack/compare.sh's pairs, each on one core and on two, ROUNDS times, and
# prints for each binary the medians of its rounds: the speed-up of two
# cores over one, the two-core time, the CPU time (user and system) of two
# cores over one, the cores the two-core run kept busy, and the largest
# resident size of all its runs. This machine's speed changes within
# minutes: binaries that run in turn share those changes, where runs of one
# then the other would not; odd rounds run the binaries in the order given,
# one core then two, even rounds in the reverse, so that a machine slowing
# down favours none.
#
#	hack/alternate.sh 8 /tmp/before/fargatekit /tmp/after/fargatekit
#
# Build each binary as hack/compare.sh does (copied, not run where the
# linker wrote it). FILES (default 10000) is the corpus size in files of
# ten Deployments.
set -euo pipefail
if [ $# -lt 2 ] || ! [[ $1 =~ ^[1-9][0-9]*$ ]]; then
	echo "usage: hack/alternate.sh ROUNDS BINARY..." >&2
	exit 2
fi
rounds=$1
shift
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
n=0
bins=("")
for bin in "$@"; do
	n=$((n + 1))
	bins+=("$bin")
	cp "$bin" "$work/bin$n"
done
cd "$(dirname "$0")/.."
go run ./hack/corpus -files "${FILES:-10000}" -per-file 10 "$work/corpus"

# run N CORES: one run of binary N; prints its elapsed and CPU seconds, and
# keeps its largest resident size. A run that fails stops the script.
run() {
	if ! GOMAXPROCS=$2 /usr/bin/time -f '%e %U %S %M' -o "$work/time" "$work/bin$1" check --fail-on none -o json "$work/corpus" > /dev/null 2> "$work/err"; then
		echo "alternate.sh: ${bins[$1]} on $2 core(s) failed:" >&2
		cat "$work/time" "$work/err" >&2
		exit 1
	fi
	tail -n 1 "$work/time" | tee -a "$work/rss$1" | awk '{ printf "%s %.2f\n", $1, $2 + $3 }'
}

for round in $(seq "$rounds"); do
	order=$(seq "$n")
	if ((round % 2 == 0)); then
		order=$(seq "$n" -1 1)
	fi
	for i in $order; do
		if ((round % 2)); then
			one=$(run "$i" 1)
			two=$(run "$i" 2)
		else
			two=$(run "$i" 2)
			one=$(run "$i" 1)
		fi
		# Times of 0.00 s (a corpus too small to time) count as 0.01 s.
		awk -v one="$one" -v two="$two" 'BEGIN {
			split(one, a, " "); split(two, b, " ")
			for (k = 1; k <= 2; k++) { if (a[k] <= 0) a[k] = 0.01; if (b[k] <= 0) b[k] = 0.01 }
			printf "%.3f %.2f %.3f %.3f\n", a[1] / b[1], b[1], b[2] / a[2], b[2] / b[1]
		}' >> "$work/rounds$i"
	done
done

# median COLUMN FILE
median() {
	cut -d' ' -f"$1" "$2" | sort -n | awk '{ v[NR] = $1 } END { printf "%.3f", (v[int((NR + 1) / 2)] + v[int(NR / 2) + 1]) / 2 }'
}

echo "| binary | rounds | speed-up, 2 cores over 1 | 2 cores | CPU time, 2 cores / 1 core | cores busy | max resident, any run |"
echo "| --- | --- | --- | --- | --- | --- | --- |"
for i in $(seq "$n"); do
	printf '| %s | %s | %s× | %s s | %s | %s | %.1f MB |\n' "${bins[$i]}" "$rounds" "$(median 1 "$work/rounds$i")" "$(median 2 "$work/rounds$i")" \
		"$(median 3 "$work/rounds$i")" "$(median 4 "$work/rounds$i")" "$(sort -n -k4 "$work/rss$i" | tail -n 1 | awk '{ print $4 / 1024 }')"
done
