#!/usr/bin/env bash
# A tiny Mixtral-shaped model (8 routed experts, top-2, no shared expert; 4 blocks of h 128) on 4
# CPU ranks at expert parallelism 1, 2 and 4 (ZeRO-2 over dp_shard 4): tokens/s, the planned step
# time next to the measured one, and peak tensor memory next to the estimate.
#
#   bench/moe_bench/run.sh [STEPS]    (default 12 steps per layout; the first 2 are warm-up)
#
# Calibrates this machine once (accel calibrate) and plans every layout with that profile. The
# measured step is the median step_seconds of metrics.jsonl after the warm-up; memory is the
# run's summary.json (peak live tensor bytes of the counting allocator, rank with the largest
# peak, against the plan's estimate without runtime overhead).
# Benchmarks are run by hand, never asserted on in tests.
set -euo pipefail

STEPS=${1:-12}
WARMUP=2
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
ACCEL=${ACCEL:-$ROOT/build/cli/accel}
WORK=$(mktemp -d /tmp/accel-moe-bench.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
cd "$ROOT"

SPEC=examples/specs/moe-mini_cpu4_ep.yaml
MIXTRAL=(--set model.moe.num_shared_experts=0 --set training.sample_tokens=0 --set checkpoint.every_steps=0)
"$ACCEL" calibrate -o "$WORK/profile.json" >"$WORK/calibrate.log" 2>&1 || { cat "$WORK/calibrate.log" >&2; exit 1; }

echo "| ep | tokens/s | step planned (s) | step measured (s) | measured/planned | peak MiB | estimate MiB | measured/estimate |"
echo "|---:|---:|---:|---:|---:|---:|---:|---:|"
for ep in 1 2 4; do
  dir=$WORK/ep$ep
  sets=("${MIXTRAL[@]}" --set parallel.expert=$ep --set training.steps="$STEPS" --set checkpoint.dir="$dir/ckpt")
  "$ACCEL" plan "$SPEC" "${sets[@]}" --set cluster.device_profile="$WORK/profile.json" --format json >"$dir.plan.json"
  "$ACCEL" run "$SPEC" "${sets[@]}" --run-dir "$dir" >"$dir.log" 2>&1 || { tail -5 "$dir.log" >&2; exit 1; }
  python3 - "$dir.plan.json" "$dir/metrics.jsonl" "$dir/summary.json" "$ep" "$WARMUP" <<'PY'
import json, statistics, sys
plan = json.load(open(sys.argv[1]))["step_time"]["step_seconds"]
steps = [json.loads(l) for l in open(sys.argv[2]) if l.strip()][int(sys.argv[5]):]
step = statistics.median(s["step_seconds"] for s in steps)
tokens = statistics.median(s["tokens_per_second"] for s in steps)
memory = json.load(open(sys.argv[3]))["memory"]
peak = max(memory["ranks"], key=lambda r: r["peak_tensor_bytes"])
mib = 1 << 20
print(f"| {sys.argv[4]} | {tokens:.0f} | {plan:.3f} | {step:.3f} | {step / plan:.2f} | "
      f"{peak['peak_tensor_bytes'] / mib:.2f} | {peak['estimate_tensor_bytes'] / mib:.2f} | "
      f"{peak['measured_over_estimate']:.3f} |")
PY
done
echo
echo "$(nproc) cores, $(date -u +%Y-%m-%dT%H:%MZ); profile: $(grep -E '^matmul fp32 [0-9]' "$WORK/calibrate.log" | head -1)"
