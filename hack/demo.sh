#!/usr/bin/env bash
# Runs fargatekit check on the bundled examples, as the README shows.
# Findings are the point of the demo, so exit code 1 (findings) is success here.
set -uo pipefail
cd "$(dirname "$0")/.."
bin/fargatekit check --profiles examples/profiles/cluster.yaml examples/manifests/
rc=$?
[ $rc -le 1 ] || exit $rc
exit 0
