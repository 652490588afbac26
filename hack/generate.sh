#!/usr/bin/env bash
# Regenerates the files made from the code: docs/rules.md from the rule registry.
set -euo pipefail
cd "$(dirname "$0")/.."
go run ./cmd/fargatekit rules -o markdown > docs/rules.md
