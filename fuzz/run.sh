#!/usr/bin/env bash
# Runs one libFuzzer target of fuzz/ on its seeds, then keeps fuzzing (libFuzzer options pass through):
#   fuzz/run.sh spec_plan_fuzzer -max_total_time=600
#   fuzz/run.sh safetensors_fuzzer -runs=1000000
#   fuzz/run.sh spec_plan_fuzzer path/to/crash-input   # reproduce one input (no fuzzing)
# Build the targets first: cmake --preset asan && cmake --build --preset fuzz -j2.
#
# Seeds: the target's checked-in inputs (fuzz/corpus/TARGET, written by fuzz/make_seeds.py), the
# repository files of its format (job specs, config.json files; copied at run time so they never go
# stale), and every past finding (fuzz/regressions/TARGET). New inputs libFuzzer finds go to
# $ACCEL_FUZZ_WORK/corpus/TARGET (default build-asan/fuzz-work) and crashes to
# $ACCEL_FUZZ_WORK/artifacts/TARGET/; a crash, leak, timeout (10 s) or more than 2 GiB of memory
# ends the run with a non-zero exit status.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${ACCEL_FUZZ_BUILD:-$root/build-asan}"
work="${ACCEL_FUZZ_WORK:-$build/fuzz-work}"

if [ $# -lt 1 ]; then
  echo "usage: fuzz/run.sh TARGET [libFuzzer options or input files...]" >&2
  echo "targets: $(cd "$root/fuzz" && ls ./*_fuzzer.cc | sed 's|./||; s|\.cc||' | tr '\n' ' ')" >&2
  exit 2
fi
target="$1"
shift
binary="$build/fuzz/$target"
if [ ! -x "$binary" ]; then
  echo "fuzz/run.sh: $binary is not built (cmake --preset asan && cmake --build --preset fuzz -j2)" >&2
  exit 2
fi

case "$target" in
  spec_plan_fuzzer) dict=spec.dict ;;
  overrides_fuzzer) dict=overrides.dict ;;
  device_profile_fuzzer) dict=device_profile.dict ;;
  tokenizer_decode_fuzzer) dict=tokenizer_decode.dict ;;
  model_config_fuzzer | safetensors_fuzzer | pretrained_fuzzer | shard_file_fuzzer | \
    checkpoint_manifest_fuzzer | \
    deepspeed_import_fuzzer | tokenizer_json_fuzzer) dict=json.dict ;;
  *) dict="" ;;
esac

# Given an input file (not an option), reproduce it only.
for arg in "$@"; do
  if [ "${arg#-}" = "$arg" ]; then
    exec "$binary" ${dict:+-dict="$root/fuzz/dict/$dict"} "$@"
  fi
done

# The repository's own files of the target's format.
mkdir -p "$work"
work="$(cd "$work" && pwd)"
seeds="$work/seeds/$target"
rm -rf "$seeds"
mkdir -p "$seeds" "$work/corpus/$target" "$work/artifacts/$target"
copy_seeds() {
  local file
  for file in "$@"; do
    [ -f "$file" ] && cp "$file" "$seeds/$(realpath --relative-to="$root" "$file" | tr '/' '_')"
  done
  return 0
}
shopt -s nullglob
case "$target" in
  spec_plan_fuzzer)
    copy_seeds "$root"/examples/specs/*.yaml "$root"/tests/spec/bad/*.yaml "$root"/tests/planner/specs/*.yaml ;;
  model_config_fuzzer)
    copy_seeds "$root"/tests/data/corpus/models/*/config.json "$root"/examples/models/*/config.json \
      "$root"/tests/spec/bad/models/*/config.json ;;
  tokenizer_json_fuzzer)
    copy_seeds "$root"/tests/data/tokenizers/*.json ;;
  sentencepiece_model_fuzzer)
    copy_seeds "$root"/tests/data/tokenizers/*.model ;;
  device_profile_fuzzer)
    copy_seeds "$root"/tests/spec/bad/profiles/*.json ;;
esac
case "$target" in
  accelerate_import_fuzzer | deepspeed_import_fuzzer | torchtitan_import_fuzzer)
    mapfile -t configs < <(find "$root/tests/data/corpus/configs/${target%_import_fuzzer}" -type f)
    copy_seeds "${configs[@]}" ;;
esac
copy_seeds "$root/fuzz/corpus/$target"/*

dirs=("$work/corpus/$target" "$seeds")
[ -d "$root/fuzz/regressions/$target" ] && dirs+=("$root/fuzz/regressions/$target")

# Targets that read files write their input to $TMPDIR: a tmpfs makes their fsyncs cheap.
if [ -z "${TMPDIR:-}" ] && [ -d /dev/shm ] && [ -w /dev/shm ]; then export TMPDIR=/dev/shm; fi
cd "$work"
exec "$binary" ${dict:+-dict="$root/fuzz/dict/$dict"} -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
  -artifact_prefix="$work/artifacts/$target/" "$@" "${dirs[@]}" </dev/null
