#!/usr/bin/env bash
# Writes the test fixtures' sample reports (a normal run and a hostile-data run) under OUT_DIR (default
# /tmp/iapguard-report-samples, outside git) and runs the headless-Chromium check on each report.html.
# Needs a prior `swift build --build-tests`.
set -euo pipefail
cd "$(dirname "$0")/.."
out="${1:-/tmp/iapguard-report-samples}"
rm -rf "$out"
mkdir -p "$out"
IAPGUARD_REPORT_SAMPLES="$out" swift test --skip-build --filter ReportSampleExport >/dev/null
status=0
for name in standard hostile; do
  echo "== $name"
  scripts/check-report-in-browser.sh "$out/$name/"*/report.html "$out/$name-browser" || status=1
  scripts/check-report-in-browser.sh "$out/$name/index.html" "$out/$name-index-browser" || status=1
done
exit $status
