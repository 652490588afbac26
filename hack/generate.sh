#!/usr/bin/env bash
# Regenerates the files made from others: docs/rules.md from the rule
# registry, and the watch chart's copies of the alerting rules and the
# dashboard.
set -euo pipefail
cd "$(dirname "$0")/.."
go run ./cmd/fargatekit rules -o markdown > docs/rules.md
cp deploy/prometheus/fargatekit-rules.yaml deploy/grafana/fargatekit-dashboard.json deploy/charts/fargatekit-watch/files/
