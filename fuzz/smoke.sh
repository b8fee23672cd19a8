#!/usr/bin/env bash
# The fuzzing smoke run of `make test` (target test-fuzz): builds the fuzz targets of the `asan` preset (clang,
# libFuzzer, AddressSanitizer + UBSan, core only), then runs every target of fuzz/ on its seeds and
# past findings (fuzz/regressions) followed by a few seconds of fuzzing: by default 3 s per
# target, JOBS (2) targets at a time, under a minute in all (ACCEL_FUZZ_SMOKE_SECONDS changes the
# seconds). Any crash, sanitizer report, timeout or out-of-memory fails the run; the input is kept
# under build-asan/fuzz-smoke/artifacts/TARGET/ and reproduces with `fuzz/run.sh TARGET FILE`.
# Long runs: see docs/fuzzing.md and fuzz/run.sh.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
seconds="${ACCEL_FUZZ_SMOKE_SECONDS:-3}"
jobs="${JOBS:-2}"

start=$(date +%s)
cmake --preset asan >/dev/null
cmake --build --preset fuzz -j "$jobs"
built=$(date +%s)

work="$root/build-asan/fuzz-smoke"
rm -rf "$work"
mkdir -p "$work"
status=0
targets=()
for source in fuzz/*_fuzzer.cc; do targets+=("$(basename "$source" .cc)"); done
# JOBS targets at a time: each still fuzzes for $seconds, and start-up, seeds and exit of one
# target overlap another's fuzzing.
for ((i = 0; i < ${#targets[@]}; i += jobs)); do
  batch=("${targets[@]:i:jobs}")
  pids=()
  for target in "${batch[@]}"; do
    ACCEL_FUZZ_WORK="$work" fuzz/run.sh "$target" -max_total_time="$seconds" >"$work/$target.log" 2>&1 &
    pids+=($!)
  done
  for k in "${!batch[@]}"; do
    target="${batch[k]}"
    log="$work/$target.log"
    if wait "${pids[k]}"; then
      runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
      echo "fuzz smoke: $target ok (${runs:-?} inputs in ${seconds} s)"
    else
      status=1
      echo "fuzz smoke: $target FAILED; the end of $log:" >&2
      tail -n 40 "$log" >&2
    fi
  done
done
echo "fuzz smoke: build $((built - start)) s, fuzzing $(($(date +%s) - built)) s"
exit $status
