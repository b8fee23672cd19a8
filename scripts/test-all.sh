#!/usr/bin/env bash
# `make test`: every test, phase by phase, then each phase's wall time.
#   deps       scripts/install-deps.sh (fast when everything is installed)
#   configure  the `default` preset (with the executor when LibTorch is installed)
#   build      everything in build/
#   tests      every CTest test of build/ (core and executor)
#   asan       the `asan` preset (clang, AddressSanitizer + UBSan, core only): the core tests and
#              the libFuzzer targets, compiled once for both, then the core tests
#   fuzz       each fuzz target's smoke run (fuzz/smoke.sh) on the asan build
# Stops at the first failing phase; the times are printed either way. JOBS (default 2) is the
# parallelism of builds and tests.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 1
jobs="${JOBS:-2}"
names=()
seconds=()
status=0

phase() {
  local name="$1"
  shift
  local start
  start=$(date +%s)
  echo "==> $name: $*"
  "$@"
  status=$?
  names+=("$name")
  seconds+=($(($(date +%s) - start)))
  return "$status"
}

report() {
  local total=0 i
  echo
  echo "make test: phase times"
  for i in "${!names[@]}"; do
    printf '  %-16s %5d s\n' "${names[i]}" "${seconds[i]}"
    total=$((total + seconds[i]))
  done
  printf '  %-16s %5d s (%d min)\n' total "$total" $((total / 60))
  [ "$status" -eq 0 ] || echo "make test: phase '${names[-1]}' failed (exit $status)"
}
trap report EXIT

sanitized_tests() {
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    LSAN_OPTIONS=suppressions="$PWD/tests/lsan.supp" \
    ctest --test-dir build-asan --output-on-failure -j "$jobs" -L core
}

phase deps bash scripts/install-deps.sh || exit "$status"
phase configure cmake --preset default || exit "$status"
phase build cmake --build build -j "$jobs" || exit "$status"
phase tests ctest --test-dir build --output-on-failure -j "$jobs" || exit "$status"
phase asan-configure cmake --preset asan || exit "$status"
phase asan-build cmake --build build-asan -j "$jobs" || exit "$status"
phase asan-tests sanitized_tests || exit "$status"
phase fuzz env JOBS="$jobs" bash fuzz/smoke.sh || exit "$status"
