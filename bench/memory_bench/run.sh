#!/usr/bin/env bash
# The plan's memory estimate against the tensor bytes each rank really allocated.
#
#   bench/memory_bench/run.sh [STEPS]        (default 3 optimizer steps per layout)
#   ONLY='pp|3D' bench/memory_bench/run.sh   (only the layouts whose name matches the regex)
#
# For every CPU example under examples/specs/ and more layouts made from them with --set (sharding
# stages 0-3, hybrid sharding, fp32/bf16 parameters, compute and reduction, gradient
# accumulation, offload, selective, per-op and full recompute, a Llama model, pipeline schedules, tensor
# parallelism, the 3D example), runs `accel run` for STEPS steps and reads the run's
# summary.json: the estimate per category for the rank's pipeline stage (device terms without
# runtime_overhead, which the counting allocator cannot see) and the peak live tensor bytes the
# counting CPU allocator measured on each rank (executor/memory/counting_allocator.h). Prints one
# row per layout and pipeline stage with measured/estimate for the rank with the largest peak, and
# the block's activation bytes per s·b·h element the plan states (B/sbh: at t = 1, without the
# attention core and autocast's weight copies). Target: within ±5%.
# Benchmarks are run by hand, never asserted on in tests.
set -euo pipefail

STEPS=${1:-${STEPS:-3}}
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
ACCEL=${ACCEL:-$ROOT/build/cli/accel}
WORK=$(mktemp -d /tmp/accel-memory-bench.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
cd "$ROOT"

DP=examples/specs/gpt2-small_cpu2_dp.yaml
Z2=examples/specs/gpt2-mini_cpu4_zero2.yaml
MOE=examples/specs/moe-mini_cpu4_ep.yaml
CP=examples/specs/llama-mini_cpu4_cp2.yaml
ZBV=examples/specs/llama-mini_cpu4_zbv.yaml
# name | spec | overrides (space-separated --set values)
LAYOUTS=(
  "example dp (2 ranks)|$DP|"
  "example zero2 (4 ranks)|$Z2|"
  "stage 0, 4 ranks|$Z2|sharding.stage=0"
  "stage 1|$Z2|sharding.stage=1"
  "stage 3|$Z2|sharding.stage=3"
  "hybrid 2x2 stage 3|$Z2|sharding.stage=3 parallel.data_replicate=2 parallel.data_shard=2"
  "stage 2, bf16 params|$Z2|precision.params=bf16"
  "stage 3, bf16 params+reduce|$Z2|sharding.stage=3 precision.params=bf16 precision.reduce=bf16"
  "stage 2, fp32 compute|$Z2|precision.compute=fp32"
  "stage 0, fp32, accum 1|$Z2|sharding.stage=0 precision.compute=fp32 data.global_batch_size=32"
  "stage 2, micro 16 seq 128|$Z2|data.micro_batch_size=16 data.seq_len=128 data.global_batch_size=128"
  "stage 2, offload optimizer|$Z2|sharding.offload=optimizer"
  "stage 3, offload all|$Z2|sharding.stage=3 sharding.offload=all"
  "stage 2, loss in 1 chunk|$Z2|training.loss_chunks=1"
  "stage 2, loss in 16 chunks|$Z2|training.loss_chunks=16"
  "stage 2, recompute selective|$Z2|training.recompute=selective"
  "stage 2, recompute full|$Z2|training.recompute=full"
  "stage 2, recompute op|$Z2|training.recompute=op"
  "stage 3, fp32, recompute full|$Z2|sharding.stage=3 precision.compute=fp32 training.recompute=full"
  "llama stage 2|$Z2|model.arch=llama model.num_kv_heads=2 model.ffn_hidden_size=344"
  "llama seq 128|$Z2|model.arch=llama model.num_kv_heads=2 model.ffn_hidden_size=344 data.seq_len=128 data.micro_batch_size=4"
  "llama seq 128, recompute selective|$Z2|model.arch=llama model.num_kv_heads=2 model.ffn_hidden_size=344 data.seq_len=128 data.micro_batch_size=4 training.recompute=selective"
  "llama seq 128, recompute op|$Z2|model.arch=llama model.num_kv_heads=2 model.ffn_hidden_size=344 data.seq_len=128 data.micro_batch_size=4 training.recompute=op"
  "llama stage 3 bf16, recompute op|$Z2|model.arch=llama model.num_kv_heads=2 model.ffn_hidden_size=344 sharding.stage=3 precision.params=bf16 training.recompute=op"
  "llama stage 3 bf16|$Z2|model.arch=llama model.num_kv_heads=2 model.ffn_hidden_size=344 sharding.stage=3 precision.params=bf16"
  "pp 2 1f1b x dp 2, 4 microbatches|$Z2|parallel.pipeline=2 parallel.data_shard=2 data.grad_accum_steps=4 data.global_batch_size=auto"
  "pp 2 gpipe x dp 2, 4 microbatches|$Z2|parallel.pipeline=2 parallel.pipeline_schedule=gpipe parallel.data_shard=2 data.grad_accum_steps=4 data.global_batch_size=auto"
  "pp 2 interleaved x dp 2, 4 microbatches|$Z2|parallel.pipeline=2 parallel.pipeline_schedule=interleaved_1f1b parallel.data_shard=2 data.grad_accum_steps=4 data.global_batch_size=auto"
  "pp 4 1f1b, 8 microbatches, ZeRO-0|$Z2|parallel.pipeline=4 parallel.data_shard=1 sharding.stage=0 data.grad_accum_steps=8 data.global_batch_size=auto"
  "tp 2 x dp 2 stage 1|$Z2|parallel.tensor=2 parallel.data_shard=2 sharding.stage=1"
  "tp 2 sp x dp 2 stage 1|$Z2|parallel.tensor=2 parallel.sequence_parallel=true parallel.data_shard=2 sharding.stage=1"
  "llama tp 2 x dp 2 stage 1|$Z2|model.arch=llama model.num_kv_heads=2 model.ffn_hidden_size=344 parallel.tensor=2 parallel.data_shard=2 sharding.stage=1"
  "llama tp 2 sp x dp 2 stage 1|$Z2|model.arch=llama model.num_kv_heads=2 model.ffn_hidden_size=344 parallel.tensor=2 parallel.sequence_parallel=true parallel.data_shard=2 sharding.stage=1"
  "llama tp 2 sp x dp 2 stage 1, recompute op|$Z2|model.arch=llama model.num_kv_heads=2 model.ffn_hidden_size=344 parallel.tensor=2 parallel.sequence_parallel=true parallel.data_shard=2 sharding.stage=1 training.recompute=op"
  "llama tp 4, kv heads replicated|$Z2|model.arch=llama model.num_kv_heads=2 model.ffn_hidden_size=344 parallel.tensor=4 parallel.data_shard=1 sharding.stage=0"
  "llama tp 2 sp x dp 2, fp32|$Z2|model.arch=llama model.num_kv_heads=2 model.ffn_hidden_size=344 parallel.tensor=2 parallel.sequence_parallel=true parallel.data_shard=2 sharding.stage=1 precision.compute=fp32"
  "example llama tp 2 sp (4 ranks)|examples/specs/llama-mini_cpu4_tp2.yaml|"
  "3D example (8 ranks)|examples/specs/gpt2-mini_cpu8_3d.yaml|"
  "moe example ep 2 stage 2 (4 ranks)|$MOE|"
  "moe 1 rank, stage 0|$MOE|parallel.data_shard=1 parallel.expert=1 sharding.stage=0 cluster.devices_per_node=1 data.global_batch_size=8"
  "moe ep 4 stage 3|$MOE|parallel.expert=4 sharding.stage=3"
  "moe ep 2 stage 3, bf16 params|$MOE|sharding.stage=3 precision.params=bf16 precision.reduce=bf16"
  "moe ep 2 x tp 2 sp stage 1|$MOE|parallel.data_shard=2 parallel.tensor=2 parallel.sequence_parallel=true sharding.stage=1"
  "moe ep 2 stage 3, recompute full|$MOE|sharding.stage=3 training.recompute=full"
  "moe ep 2 hybrid 2x2 stage 3|$MOE|parallel.data_replicate=2 parallel.data_shard=2 sharding.stage=3"
  "moe pp 2 x ep 2, 4 microbatches|$MOE|parallel.pipeline=2 parallel.data_shard=2 data.grad_accum_steps=4 data.global_batch_size=auto"
  "moe ep 1 stage 2, no shared expert|$MOE|parallel.expert=1 model.moe.num_shared_experts=0"
  "moe ep 4 stage 2, capacity factor 1.25|$MOE|parallel.expert=4 model.moe.capacity_factor=1.25"
  "example cp 2 ring x dp 2 stage 2 (4 ranks)|$CP|"
  "cp 2 ulysses x dp 2 stage 2|$CP|parallel.context_method=ulysses"
  "cp 4 ring, stage 0|$CP|parallel.context=4 parallel.data_shard=1 sharding.stage=0"
  "cp 4 ulysses, 4 kv heads, stage 0|$CP|parallel.context=4 parallel.context_method=ulysses model.num_kv_heads=4 parallel.data_shard=1 sharding.stage=0"
  "cp 2 ring x tp 2 sp, stage 0|$CP|parallel.tensor=2 parallel.sequence_parallel=true parallel.data_shard=1 sharding.stage=0"
  "cp 2 ring x dp 2 stage 3, recompute selective|$CP|sharding.stage=3 training.recompute=selective"
  "cp 2 ring x pp 2, 4 microbatches|$CP|parallel.pipeline=2 parallel.data_shard=1 sharding.stage=0 data.grad_accum_steps=4 data.global_batch_size=auto"
  "cp 2 ulysses x dp 2, bf16 params|$CP|parallel.context_method=ulysses precision.params=bf16 precision.reduce=bf16"
  "example zbv pp 2 x dp 2 stage 1 (4 ranks)|$ZBV|"
  "zb_h1 pp 2 x dp 2 stage 1|$ZBV|parallel.pipeline_schedule=zb_h1"
  "zb_h1 pp 4, 8 microbatches, ZeRO-0|$ZBV|parallel.pipeline_schedule=zb_h1 parallel.pipeline=4 parallel.data_shard=1 sharding.stage=0 data.grad_accum_steps=8 data.global_batch_size=auto"
  "zbv pp 4, 8 layers, 8 microbatches, ZeRO-0|$ZBV|parallel.pipeline=4 parallel.data_shard=1 sharding.stage=0 model.num_layers=8 data.grad_accum_steps=8 data.global_batch_size=auto"
  "zb_h1 pp 2 x dp 2, bf16 params|$ZBV|parallel.pipeline_schedule=zb_h1 precision.params=bf16"
  "1f1b pp 2 x dp 2, bf16 params|$ZBV|parallel.pipeline_schedule=1f1b precision.params=bf16"
  "stage 1, bf16 params, accum 2|$Z2|sharding.stage=1 precision.params=bf16"
  "stage 0, bf16 params, accum 2|$Z2|sharding.stage=0 precision.params=bf16"
)

ROWS=$WORK/rows.jsonl
for entry in "${LAYOUTS[@]}"; do
  IFS='|' read -r name spec overrides <<<"$entry"
  if [[ -n "${ONLY:-}" ]] && ! [[ "$name" =~ $ONLY ]]; then continue; fi
  dir=$WORK/run-$(echo "$name" | tr -c 'a-zA-Z0-9' '_')
  sets=(--set training.steps="$STEPS" --set training.sample_tokens=0
        --set checkpoint.every_steps=0 --set checkpoint.dir="$dir/ckpt")
  for o in $overrides; do sets+=(--set "$o"); done
  if ! "$ACCEL" run "$spec" "${sets[@]}" --run-dir "$dir" >"$dir.log" 2>&1; then
    echo "FAILED: $name (log: tail below)" >&2; tail -5 "$dir.log" >&2; continue
  fi
  # The plan's activation formula gives the block's bytes per s·b·h (at t = 1, without the core).
  "$ACCEL" plan "$spec" "${sets[@]}" --format json >"$dir.plan.json" 2>/dev/null || true
  python3 -c 'import json,re,sys
s = json.load(open(sys.argv[1]))
sbh = None
try:
    plan = json.load(open(sys.argv[3]))
    for est in plan.get("memory", []):
        for t in est.get("device", []):
            m = re.search(r"([0-9.]+) B per s\*b\*h", t.get("formula", ""))
            if t.get("category") == "activations" and m: sbh = float(m.group(1))
except (OSError, ValueError):
    pass
print(json.dumps({"name": sys.argv[2], "memory": s["memory"], "sbh": sbh}))' \
    "$dir/summary.json" "$name" "$dir.plan.json" >>"$ROWS"
done

python3 - "$ROWS" <<'PY'
import json, sys
cats = ["parameters", "gradients", "master_weights", "optimizer_states", "activations", "logits",
        "communication_buffers"]
short = ["params", "grads", "master", "optim", "activ", "logits", "comm"]
def mib(b): return b / 2**20
print("| layout | B/sbh | " + " | ".join(short) + " | host | estimate | measured | measured/estimate |")
print("|---|" + "---:|" * (len(short) + 5))
worst = 0
for line in open(sys.argv[1]):
    row = json.loads(line)
    ranks = row["memory"]["ranks"]
    stages = sorted({r["stage"] for r in ranks})
    # One row per pipeline stage (stages hold different layers, embeddings and head).
    for stage in stages:
        top = max((r for r in ranks if r["stage"] == stage), key=lambda r: r["peak_tensor_bytes"])
        est = next(e for e in row["memory"]["estimate"] if e["stage"] == stage)
        terms = [f'{mib(est["terms"].get(c, 0)):.2f}' if c in est["terms"] else "-" for c in cats]
        # Offloaded (host) terms: on a CPU device the counting allocator sees them too.
        host = sum(v for k, v in est["terms"].items() if k.startswith("host_"))
        terms.append(f"{mib(host):.2f}" if host else "-")
        ratio = top["measured_over_estimate"]
        worst = max(worst, abs(ratio - 1))
        name = row["name"] + (f", stage {stage}" if len(stages) > 1 else "")
        sbh = f'{row["sbh"]:.1f}' if row.get("sbh") is not None else "-"
        print(f'| {name} | {sbh} | ' + " | ".join(terms) +
              f' | {mib(top["estimate_tensor_bytes"]):.2f} | {mib(top["peak_tensor_bytes"]):.2f} | {ratio:.3f} |')
print(f"\nMiB per rank (rank with the largest peak). Largest deviation: {worst*100:.1f}% (target 5%)")
PY
