#!/usr/bin/env bash
# Before/after of the lean blocks (#36): the same jobs run by two builds of accel, their losses
# step by step and their training throughput side by side.
#
#   bench/lean_blocks/compare.sh OLD_ACCEL NEW_ACCEL [STEPS]
#
# OLD_ACCEL is `accel` built from a commit before the lean blocks (e.g. a worktree of ac34808),
# NEW_ACCEL this tree's build/cli/accel. Each job runs STEPS steps (default 6) with each binary,
# alternating old and new, PASSES times (default 3); a row prints the largest relative loss
# difference over the steps (first pass; the runs are deterministic) and the median tokens/s of
# each binary over its passes, from the steps after the first (metrics.jsonl). fp32 rows compare
# losses where the arithmetic differs only in the order of fp32 operations; bf16 rows where the
# lean blocks round differently (e.g. GPT-2's c_attn bias is added in bf16).
# ONLY='regex' runs only the jobs whose name matches. Benchmarks are run by hand, never asserted
# on in tests.
set -euo pipefail

OLD=${1:?usage: compare.sh OLD_ACCEL NEW_ACCEL [STEPS]}
NEW=${2:?usage: compare.sh OLD_ACCEL NEW_ACCEL [STEPS]}
STEPS=${3:-6}
PASSES=${PASSES:-3}
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
WORK=$(mktemp -d /tmp/accel-lean-compare.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
cd "$ROOT"

# name | spec | overrides
JOBS=(
  "default job (gpt2, dp 2, fp32)|examples/specs/gpt2-small_cpu2_dp.yaml|"
  "gpt2 dp 2, bf16 compute|examples/specs/gpt2-small_cpu2_dp.yaml|precision.compute=bf16"
  "gpt2 dp 2, bf16 params|examples/specs/gpt2-small_cpu2_dp.yaml|precision.params=bf16 precision.compute=bf16"
  "llama bf16 params, 2 ranks|examples/specs/llama-mini_cpu2_bf16.yaml|"
  "llama tp 2 + sp, fp32|examples/specs/llama-mini_cpu4_tp2.yaml|"
  "llama tp 2 + sp, bf16 compute|examples/specs/llama-mini_cpu4_tp2.yaml|precision.compute=bf16"
  "gpt2 pp 2 x tp 2 x dp 2, fp32|examples/specs/gpt2-mini_cpu8_3d.yaml|"
)

run() {  # binary dir spec overrides...
  local bin=$1 dir=$2 spec=$3
  shift 3
  local sets=(--set training.steps="$STEPS" --set training.sample_tokens=0 --set checkpoint.every_steps=0
              --set checkpoint.dir="$dir/ckpt")
  for o in "$@"; do sets+=(--set "$o"); done
  "$bin" run "$spec" "${sets[@]}" --run-dir "$dir" >"$dir.log" 2>&1
}

echo "| job | max relative loss difference | old tokens/s | new tokens/s | new/old |"
echo "|---|---:|---:|---:|---:|"
for entry in "${JOBS[@]}"; do
  IFS='|' read -r name spec overrides <<<"$entry"
  if [[ -n "${ONLY:-}" ]] && ! [[ "$name" =~ $ONLY ]]; then continue; fi
  read -r -a sets <<<"$overrides"
  key=$(echo "$name" | tr -c 'a-zA-Z0-9' '_')
  for pass in $(seq 1 "$PASSES"); do
    for which in old new; do
      bin=$OLD
      [ "$which" = new ] && bin=$NEW
      if ! run "$bin" "$WORK/$key-$which-$pass" "$spec" ${sets[@]+"${sets[@]}"}; then
        echo "FAILED: $name ($which): $(tail -3 "$WORK/$key-$which-$pass.log")" >&2
        continue 3
      fi
    done
  done
  python3 - "$WORK" "$key" "$name" "$PASSES" <<'PY'
import json, statistics, sys
work, key, name, passes = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
def steps(which, p):
    return [json.loads(l) for l in open(f"{work}/{key}-{which}-{p}/metrics.jsonl") if '"loss"' in l]
old, new = steps("old", 1), steps("new", 1)
diff = max(abs(a["loss"] - b["loss"]) / abs(a["loss"]) for a, b in zip(old, new))
def tps(which):
    per = [statistics.median(s["tokens_per_second"] for s in steps(which, p)[1:]) for p in range(1, passes + 1)]
    return statistics.median(per)
o, n = tps("old"), tps("new")
print(f"| {name} | {diff:.2e} | {o:,.0f} | {n:,.0f} | {n / o:.3f} |")
PY
done
