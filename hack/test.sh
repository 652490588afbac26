#!/usr/bin/env bash
# Runs every test with the race detector. The emulator's integration tests
# (TestIntegration*) run a real control plane: it is built from source once
# (hack/build-controlplane.sh, cached) and handed to them in FARGATEKIT_CONTROLPLANE.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -z "${FARGATEKIT_CONTROLPLANE:-}" ]; then
	FARGATEKIT_CONTROLPLANE=$(hack/build-controlplane.sh)
	export FARGATEKIT_CONTROLPLANE
fi
hack/tools.sh awscli >/dev/null
# The alerting rules' tests run promtool, pinned and cached.
FARGATEKIT_PROMTOOL=$(hack/tools.sh promtool)
export FARGATEKIT_PROMTOOL
# The release tests (internal/release) run GoReleaser, ko, crane, krew and
# pre-commit, pinned and cached by hack/tools.sh.
hack/tools.sh pre-commit >/dev/null
# The HTML reports' tests open them in headless Chromium.
hack/tools.sh chromium >/dev/null
PATH="$(hack/tools.sh release):$PATH"
export PATH
# Without the control plane the integration tests skip (go test ./... on a
# fresh clone); here a skip would hide them, so they must run.
export FARGATEKIT_INTEGRATION=required
# The release tests build fargatekit for several targets at once: they run
# after the others, whose emulator tests are sensitive to a loaded machine.
# CI's log says where its time goes; go test's own lines stay the last.
echo "$0: tools and control plane ready after ${SECONDS}s" >&2
# go test starts the packages' tests in the order it is given them. The
# emulator's come first: they are the longest and mostly wait, so the other
# packages are built and tested meanwhile rather than before them.
emulator=github.com/fargatekit/fargatekit/internal/emulator
go test -race -count=1 -timeout 40m $emulator $(go list ./... | grep -v -e /internal/release -e "^$emulator\$")
echo "$0: all but the release tests done after ${SECONDS}s" >&2
go test -race -count=1 -timeout 20m ./internal/release
