#!/usr/bin/env bash
# Runs the whole test suite (installs system packages first if needed).
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
swift build --build-tests
swift test --skip-build "$@"
