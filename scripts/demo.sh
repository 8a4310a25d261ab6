#!/usr/bin/env bash
# Runs the main job on the embedded default: generates the sample world into ./demo (SQLite store,
# bundled rules) and runs the whole pipeline on it. Reports land in ./demo/reports.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
config="${IAPGUARD_BUILD:-release}"
swift build -c "$config" --product iapguard
bin="$(swift build -c "$config" --show-bin-path)/iapguard"
"$bin" demo --out demo "$@"
