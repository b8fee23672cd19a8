#!/usr/bin/env bash
# The planner's step-time estimate against the step time `accel run` measures on CPU.
#
#   bench/step_time/run.sh [PROFILE.json]
#
# Without a profile it runs `accel calibrate` (matmul per dtype, memory bandwidth and Gloo
# all-reduces on this machine) before every pass, and estimates that pass's rows with the profile
# it just wrote: this machine's speed drifts by tens of percent over minutes, so one profile
# taken before a half-hour benchmark describes its first minutes, not the rest. With a PROFILE
# every pass uses it.
#
# For every layout below (data parallel 1/2/4, sharding stages 0-3, hybrid, gradient
# accumulation, tensor parallel 2 with and without sequence parallelism, selective and full
# recompute, bf16 compute, llama, pipeline parallel 2 with GPipe and 1F1B, alone and with data
# parallelism) it plans the job with `accel plan --format json --set
# cluster.device_profile=PROFILE` (plan.step_time) and runs it with `accel run`, reading
# step_seconds from the run's metrics.jsonl after WARMUP warm-up steps (median of the rest).
# Every layout runs once per pass (PASSES, default 3). A row prints the median over its passes
# of each figure: estimate, measured step, a contention-independent CPU-time equivalent (see
# cpu_seconds below), the machine's load average and, under tensor parallelism, the plan's
# exposed tp collectives against rank 0's measured time in them (metrics.jsonl
# tp_comm_seconds); the ranges of its estimates (how far calibrations minutes apart move it)
# and of its measured steps; and its error, the median over passes of each pass's estimate
# against the step measured minutes after that estimate's calibration (next to it the median
# estimate against the median step, the error when a single profile serves every pass).
# ONLY="text" runs only the layouts whose name contains it.
# Target ±15% on an otherwise idle machine.
# Benchmarks are run by hand, never asserted on in tests.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
ACCEL=${ACCEL:-$ROOT/build/cli/accel}
STEPS=${STEPS:-12}
SHORT=${SHORT:-4}
WARMUP=${WARMUP:-2}
PASSES=${PASSES:-3}
ONLY=${ONLY:-}  # run only the layouts whose name contains this text
WORK=$(mktemp -d /tmp/accel-step-time-bench.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
cd "$ROOT"

FIXED_PROFILE=${1:-}
[[ -z "$FIXED_PROFILE" ]] ||
  FIXED_PROFILE=$(cd "$(dirname "$FIXED_PROFILE")" && pwd)/$(basename "$FIXED_PROFILE")
PROFILES=()  # the profile of every pass, in pass order

# `accel run ARGS...` with its output in RUN_DIR.log; prints the user + sys CPU seconds of the
# whole process tree (the launcher waits for every worker).
cpu_seconds() {
  local run_dir=${*: -1}
  python3 - "$ACCEL" run "$@" <<'PY' 2>"$run_dir.err"
import resource, subprocess, sys
log = open(sys.argv[-1] + ".log", "w")
rc = subprocess.run(sys.argv[1:], stdout=log, stderr=subprocess.STDOUT).returncode
u = resource.getrusage(resource.RUSAGE_CHILDREN)
print(f"{u.ru_utime + u.ru_stime:.3f}")
sys.exit(rc)
PY
}

BASE=bench/step_time/base.yaml
LLAMA="model.arch=llama model.num_kv_heads=4 model.ffn_hidden_size=688"
# name | overrides (space-separated --set values)
LAYOUTS=(
  "dp 1|cluster.devices_per_node=1"
  "dp 2|"
  "dp 4|cluster.devices_per_node=4"
  "dp 2, accumulation 2|data.global_batch_size=32"
  "dp 4 stage 1|cluster.devices_per_node=4 parallel.data_replicate=1 parallel.data_shard=4 sharding.stage=1"
  "dp 4 stage 2|cluster.devices_per_node=4 parallel.data_replicate=1 parallel.data_shard=4 sharding.stage=2"
  "dp 4 stage 3|cluster.devices_per_node=4 parallel.data_replicate=1 parallel.data_shard=4 sharding.stage=3"
  "hybrid 2x2 stage 3|cluster.devices_per_node=4 parallel.data_replicate=2 parallel.data_shard=2 sharding.stage=3 sharding.hybrid=true"
  "dp 2 recompute selective|training.recompute=selective"
  "dp 2 recompute full|training.recompute=full"
  "dp 2 bf16 compute|precision.compute=bf16"
  "llama dp 2|$LLAMA"
  "llama tp 2|$LLAMA parallel.data_replicate=1 parallel.tensor=2"
  "llama tp 2 sequence parallel|$LLAMA parallel.data_replicate=1 parallel.tensor=2 parallel.sequence_parallel=true"
  "pp 2 1f1b, 4 microbatches|parallel.data_replicate=1 parallel.pipeline=2 data.grad_accum_steps=4 data.global_batch_size=auto"
  "pp 2 gpipe, 4 microbatches|parallel.data_replicate=1 parallel.pipeline=2 parallel.pipeline_schedule=gpipe data.grad_accum_steps=4 data.global_batch_size=auto"
  "pp 2 x dp 2 stage 1|cluster.devices_per_node=4 parallel.data_replicate=1 parallel.data_shard=2 parallel.pipeline=2 sharding.stage=1 data.grad_accum_steps=4 data.global_batch_size=auto"
)

# Every layout runs once per pass, passes one after another (PASSES, default 3): the machine's
# speed drifts over minutes, so a row's passes are spread over the whole benchmark, and each
# row reports the median over its passes and their range.
ROWS=$WORK/rows.jsonl
for pass in $(seq "$PASSES"); do
PROFILE=$FIXED_PROFILE
if [[ -z "$PROFILE" ]]; then
  PROFILE=$WORK/cpu_profile-$pass.json
  echo "pass $pass: calibrating at $(date -u +%H:%M:%S)" >&2
  "$ACCEL" calibrate -o "$PROFILE" >"$PROFILE.log" 2>&1 || { cat "$PROFILE.log" >&2; exit 1; }
  echo "pass $pass: $(date -u +%H:%M:%S) $(grep -E '^(matmul fp32 [0-9]|links)' "$PROFILE.log" | tr '\n' ' ')" >&2
fi
PROFILES+=("$PROFILE")
for entry in "${LAYOUTS[@]}"; do
  IFS='|' read -r name overrides <<<"$entry"
  [[ -z "$ONLY" || "$name" == *"$ONLY"* ]] || continue
  dir=$WORK/run-$(echo "$name" | tr -c 'a-zA-Z0-9' '_')-$pass
  sets=(--set training.steps="$STEPS" --set checkpoint.dir="$dir/ckpt")
  for o in $overrides; do sets+=(--set "$o"); done
  if ! "$ACCEL" plan "$BASE" "${sets[@]}" --set cluster.device_profile="$PROFILE" --format json \
      >"$dir.plan.json" 2>"$dir.plan.err"; then
    echo "| $name | plan failed: $(head -1 "$dir.plan.err") |" >&2; continue
  fi
  # The 1-minute load average before the run: other processes on the machine share its cores,
  # which the estimate (a dedicated machine) does not model.
  load=$(cut -d' ' -f1 /proc/loadavg)
  # CPU seconds (user + sys) of the whole process tree, for STEPS and for SHORT steps: their
  # difference per step, spread over the machine's cores, is what a step costs when the job has
  # the cores to itself (contention-independent; it counts busy-waiting as work and ignores
  # time every core sits idle waiting on a collective).
  short_dir=$dir-short
  if ! cpu_short=$(cpu_seconds "$BASE" "${sets[@]}" --set training.steps="$SHORT" --run-dir "$short_dir") ||
     ! cpu_long=$(cpu_seconds "$BASE" "${sets[@]}" --run-dir "$dir"); then
    echo "| $name | run failed: $(grep -m1 -i error "$dir.log" "$short_dir.log" || tail -1 "$dir.log") |" >&2; continue
  fi
  python3 - "$dir.plan.json" "$dir/metrics.jsonl" "$name" "$WARMUP" "$load" "$cpu_short" "$cpu_long" \
      "$((STEPS - SHORT))" "$(nproc)" "$pass" >>"$ROWS" <<'PY'
import json, statistics, sys
plan = json.load(open(sys.argv[1]))["step_time"]
steps = [json.loads(l) for l in open(sys.argv[2]) if l.strip()]
print(json.dumps({
    "name": sys.argv[3], "pass": int(sys.argv[10]),
    "estimate": plan["step_seconds"], "compute": plan["compute_seconds"],
    "comm": plan["exposed_communication_seconds"],
    "measured": statistics.median(s["step_seconds"] for s in steps[int(sys.argv[4]):]),
    # Tensor parallelism: the plan's exposed tp collectives against rank 0's time in them.
    "tp_comm": sum(c.get("exposed_seconds", 0) for c in plan["communication"]
                   if c["group"] in ("tp", "tp_kv")),
    "tp_measured": statistics.median(s["tp_comm_seconds"] or 0 for s in steps[int(sys.argv[4]):]),
    "cpu": (float(sys.argv[7]) - float(sys.argv[6])) / int(sys.argv[8]) / int(sys.argv[9]),
    "load": float(sys.argv[5])}))
PY
  echo "pass $pass: $name done" >&2
done
done

python3 - "$ROWS" <<'PY'
import json, statistics, sys
rows = {}
for line in open(sys.argv[1]):
    r = json.loads(line)
    rows.setdefault(r["name"], []).append(r)
med = statistics.median
pct = lambda est, measured: 100 * (est - measured) / measured
print("| layout | estimate s | estimates min-max | compute s | exposed comm s | measured s "
      "| passes min-max | error | medians' error | CPU-time s | error "
      "| tp comm s estimate / measured | load |")
print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
for name, runs in rows.items():
    # The error is the median over passes of each pass's estimate (its own profile) against the
    # step that pass measured; the other columns are medians of their own.
    error = med(pct(r["estimate"], r["measured"]) for r in runs)
    cpu_error = med(pct(r["estimate"], r["cpu"]) for r in runs)
    est = [r["estimate"] for r in runs]
    measured = [r["measured"] for r in runs]
    tp = (f'{med(r["tp_comm"] for r in runs):.3f} / {med(r["tp_measured"] for r in runs):.3f}'
          if runs[0]["tp_comm"] > 0 else "-")
    print(f'| {name} | {med(est):.3f} | {min(est):.3f}-{max(est):.3f} | '
          f'{med(r["compute"] for r in runs):.3f} | {med(r["comm"] for r in runs):.3f} | '
          f'{med(measured):.3f} | {min(measured):.3f}-{max(measured):.3f} | {error:+.1f}% | '
          f'{pct(med(est), med(measured)):+.1f}% | '
          f'{med(r["cpu"] for r in runs):.3f} | {cpu_error:+.1f}% | {tp} | '
          f'{med(r["load"] for r in runs):.2f} |')
PY
echo
if [[ -n "$FIXED_PROFILE" ]]; then
  echo "profile: $(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["source"])' "$FIXED_PROFILE")"
else
  echo "profiles: accel calibrate before every pass (sources: $(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["source"])' "${PROFILES[0]}"))"
  for i in "${!PROFILES[@]}"; do
    echo "pass $((i + 1)): $(grep -E '^(matmul fp32 [0-9]|memory|links|worker efficiency|all-reduce over 2 processes, 1.049e|tensor-parallel|data-parallel|AdamW)' "${PROFILES[$i]}.log" | tr '\n' ' ')"
  done
fi
