#!/usr/bin/env bash
# Builds the libFuzzer targets in Fuzz/ (instrumented: fuzzer + address sanitizer) and runs each one.
#
#   scripts/fuzz.sh                 # every target, 30 s each
#   scripts/fuzz.sh FuzzOrdersCSV   # one target, 30 s
#   scripts/fuzz.sh all 600         # every target, 10 minutes each
#   FUZZ_JOBS=4 scripts/fuzz.sh FuzzConfigYAML 3600   # 4 parallel workers
#   FUZZ_RUNS=20000 scripts/fuzz.sh all   # CI: a fixed number of inputs per target from a fixed seed
#                                         # (repeatable: the same build explores the same inputs)
#
# The git seed corpus (Fuzz/corpus/<target>/) is read-only here: new interesting inputs go to
# Fuzz/.work/<target>/ (not in git). Crashes are written to Fuzz/.work/crashes/ and stop the run with a
# non-zero exit code; add the input to the regression tests (Tests/IAPGuardTests/Fixtures/malformed/).
set -euo pipefail
cd "$(dirname "$0")/../Fuzz"

all=(FuzzReceiptLine FuzzSignedTransactionLine FuzzNotificationLine FuzzOrdersCSV FuzzConfigYAML FuzzRuleYAML FuzzFXRates FuzzJSONDocument)
target="${1:-all}"
seconds="${2:-30}"
jobs="${FUZZ_JOBS:-1}"
if [ "$target" = "all" ]; then targets=("${all[@]}"); else targets=("$target"); fi
for t in "${targets[@]}"; do
  if [[ ! " ${all[*]} " =~ " $t " ]]; then echo "unknown target $t (one of: all ${all[*]})" >&2; exit 64; fi
done

echo "== building fuzz targets (debug, -sanitize=fuzzer,address)"
# SwiftPM's --sanitize=fuzzer adds -parse-as-library and links libFuzzer's main instead of the targets' own.
# AddressSanitizer is added as ONE combined swiftc flag: `--sanitize=fuzzer --sanitize=address` makes
# SwiftPM pass two -sanitize= flags, and swiftc keeps only the last one, so the Swift code would silently
# lose either its coverage instrumentation (fuzzing blind) or ASan, depending on their order.
build=(swift build -c debug --sanitize=fuzzer -Xswiftc -sanitize=fuzzer,address -Xcc -fsanitize=address)
"${build[@]}"
bin="$("${build[@]}" --show-bin-path)"
# Refuse to fuzz blind: the parsers' objects must carry coverage counters.
# (The section list is read whole first: with pipefail, `objdump | grep -q` fails when grep exits at the
# first match and objdump then dies of SIGPIPE.)
sections="$(objdump -h "$bin/IAPGuard.build/CSVReader.swift.o")"
if [[ "$sections" != *__sancov_cntrs* ]]; then
  echo "the Swift code is not coverage-instrumented (check the -sanitize flags)" >&2
  exit 70
fi

# Leak checking off (see below); Swift's own crash backtracer off, so a trap is reported by libFuzzer
# and AddressSanitizer without the backtracer's memory reads showing up as a second, bogus report.
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=0}"
export SWIFT_BACKTRACE="${SWIFT_BACKTRACE:-enable=no}"

mkdir -p .work/crashes
status=0
for t in "${targets[@]}"; do
  echo "== $t for ${seconds}s"
  mkdir -p ".work/$t"
  # Memory: 2 GiB per input (a 10 MB line is fine; a runaway parser is not). Timeout: 10 s per input.
  # Leak detection is off: LeakSanitizer reports the verifier's bounded chain cache and Swift globals
  # (Apple's root certificate) at exit as leaks (Data storage it cannot trace); real growth is caught
  # by -rss_limit_mb / -malloc_limit_mb instead. See Fuzz/README.md.
  # Dictionaries are optional: Fuzz/dict/<target>.dict when present.
  extra=()
  if [ -f "dict/$t.dict" ]; then extra+=(-dict="dict/$t.dict"); fi
  if [ "$jobs" -gt 1 ]; then extra+=(-jobs="$jobs" -workers="$jobs"); fi
  if [ -n "${FUZZ_RUNS:-}" ]; then extra+=(-runs="$FUZZ_RUNS" -seed=1); fi
  if ! "$bin/$t" ".work/$t" "corpus/$t" \
      -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=1024 -max_len=65536 \
      -detect_leaks=0 \
      -artifact_prefix=".work/crashes/$t-" -print_final_stats=1 "${extra[@]}"; then
    echo "!! $t found a problem: see Fuzz/.work/crashes/$t-*" >&2
    status=1
  fi
done
exit $status
