#!/usr/bin/env bash
# Takes the pictures of the HTML reports that the README shows, in docs/img:
# check.png, plan.png and upgrade.png of the bundled examples, and scan.png
# of the emulator's scan scenario. The tests that check the pages in headless
# Chromium take them (TestHTMLInBrowser; TestIntegrationScanCluster, on the
# control plane built from source, cached).
set -euo pipefail
cd "$(dirname "$0")/.."
hack/tools.sh chromium >/dev/null
out=$PWD/docs/img
mkdir -p "$out"
export FARGATEKIT_SCREENSHOTS=$out FARGATEKIT_INTEGRATION=required
go test -count=1 -run '^TestHTMLInBrowser$' ./internal/cli/
FARGATEKIT_CONTROLPLANE=${FARGATEKIT_CONTROLPLANE:-$(hack/build-controlplane.sh -q)} \
	go test -count=1 -timeout 20m -run '^TestIntegrationScanCluster$' ./internal/emulator/
ls -l "$out"
