#!/usr/bin/env bash
# Runs fargatekit on the bundled examples, as the README shows: check on the
# example shop, then plan on the profile-merge incident. Findings are the point
# of the demo, so exit code 1 (findings) counts as success here.
set -uo pipefail
cd "$(dirname "$0")/.."
status=0
run() {
	echo "\$ $*"
	"$@"
	rc=$?
	[ $rc -le 1 ] || status=$rc
	echo
}
run bin/fargatekit check --profiles examples/profiles/cluster.yaml examples/manifests/
run bin/fargatekit plan --terraform examples/incident/plan.json examples/incident/manifests/
exit $status
