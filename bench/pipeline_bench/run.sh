#!/usr/bin/env bash
# Throughput of 8 CPU ranks under data, tensor and pipeline parallelism, and the pipeline bubble
# each pipeline measured next to the one its plan shows.
#
#   bench/pipeline_bench/run.sh [STEPS]        (default 20 optimizer steps per layout)
#
# The same model (examples/specs/gpt2-mini_cpu8_3d.yaml: GPT-2 h 128, 4 layers, seq 64) and the
# same global batch (32 sequences) in every layout: dp 8; tp 2 x dp 4; pp 2 x dp 4 with GPipe,
# 1F1B, interleaved 1F1B (4 microbatches; 2 model chunks per stage), the zero-bubble ZB-H1 and
# ZBV; tp 2 x pp 2 x dp 2 (the example); then context parallelism (ring and Ulysses, cp 2 and 4)
# on a Llama at 1,024 tokens against dp 8. Each runs `accel run` for
# STEPS steps (ZeRO-1, fp32) and reads its summary.json: mean tokens/s after the first step, and
# for pipelines the plan's bubble fraction and the share of each stage's schedule time spent
# blocked in receives. The machine's cores are shared by all 8 ranks (1 intra-op thread each),
# so a rank waiting in a receive lends its core to the others: the measured wait is what the
# schedule costs on this machine, not on dedicated devices. Run by hand, never asserted on.
set -euo pipefail

STEPS=${1:-${STEPS:-20}}
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
ACCEL=${ACCEL:-$ROOT/build/cli/accel}
SPEC=examples/specs/gpt2-mini_cpu8_3d.yaml
WORK=$(mktemp -d /tmp/accel-pipeline-bench.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
cd "$ROOT"

# name | overrides (global batch 32 = micro x dp x microbatches in every row)
ZB="parallel.tensor=1 parallel.sequence_parallel=false parallel.data_shard=4 data.micro_batch_size=2"
LAYOUTS=(
  "dp 8|parallel.tensor=1 parallel.sequence_parallel=false parallel.pipeline=1 parallel.data_shard=8 data.micro_batch_size=4"
  "tp 2 x dp 4|parallel.pipeline=1 parallel.data_shard=4 data.micro_batch_size=4"
  "pp 2 x dp 4, GPipe|parallel.tensor=1 parallel.sequence_parallel=false parallel.data_shard=4 parallel.pipeline_schedule=gpipe data.micro_batch_size=2"
  "pp 2 x dp 4, 1F1B|parallel.tensor=1 parallel.sequence_parallel=false parallel.data_shard=4 data.micro_batch_size=2"
  "pp 2 x dp 4, interleaved 1F1B (2 chunks)|parallel.tensor=1 parallel.sequence_parallel=false parallel.data_shard=4 parallel.pipeline_schedule=interleaved_1f1b data.micro_batch_size=2"
  "pp 2 x dp 4, ZB-H1|$ZB parallel.pipeline_schedule=zb_h1"
  "pp 2 x dp 4, ZBV (2 chunks)|$ZB parallel.pipeline_schedule=zbv"
  "tp 2 x pp 2 x dp 2, 1F1B|"
)

ROWS=$WORK/rows.jsonl
for entry in "${LAYOUTS[@]}"; do
  IFS='|' read -r name overrides <<<"$entry"
  dir=$WORK/run-$(echo "$name" | tr -c 'a-zA-Z0-9' '_')
  sets=(--set training.steps="$STEPS" --set training.sample_tokens=0 --set checkpoint.every_steps=0
        --set checkpoint.at_end=false --set checkpoint.dir="$dir/ckpt" --set data.global_batch_size=32)
  for o in $overrides; do sets+=(--set "$o"); done
  if ! "$ACCEL" run "$SPEC" "${sets[@]}" --run-dir "$dir" >"$dir.log" 2>&1; then
    echo "FAILED: $name (log: tail below)" >&2; tail -5 "$dir.log" >&2; continue
  fi
  python3 -c 'import json,sys; s=json.load(open(sys.argv[1])); print(json.dumps({"name": sys.argv[2], "summary": s}))' \
    "$dir/summary.json" "$name" >>"$ROWS"
done

# Context parallelism at a long sequence: the cp example's model (Llama h 128, 4 layers) on
# 8 ranks, 1,024-token sequences, global batch 8 sequences, ring against Ulysses.
CP_SPEC=examples/specs/llama-mini_cpu4_cp2.yaml
CP_LAYOUTS=(
  "dp 8, seq 1024|parallel.context=1 parallel.data_shard=8 data.micro_batch_size=1"
  "cp 2 ring x dp 4, seq 1024|parallel.context=2 parallel.data_shard=4 data.micro_batch_size=2"
  "cp 2 Ulysses x dp 4, seq 1024|parallel.context=2 parallel.context_method=ulysses parallel.data_shard=4 data.micro_batch_size=2"
  "cp 4 ring x dp 2, seq 1024|parallel.context=4 parallel.data_shard=2 data.micro_batch_size=4"
  "cp 4 Ulysses x dp 2, seq 1024 (4 kv heads)|parallel.context=4 parallel.context_method=ulysses model.num_kv_heads=4 parallel.data_shard=2 data.micro_batch_size=4"
)
for entry in "${CP_LAYOUTS[@]}"; do
  IFS='|' read -r name overrides <<<"$entry"
  dir=$WORK/run-$(echo "$name" | tr -c 'a-zA-Z0-9' '_')
  sets=(--set training.steps="$STEPS" --set training.sample_tokens=0 --set checkpoint.every_steps=0
        --set checkpoint.at_end=false --set checkpoint.dir="$dir/ckpt" --set data.global_batch_size=8
        --set data.seq_len=1024 --set model.max_seq_len=1024 --set cluster.devices_per_node=8)
  for o in $overrides; do sets+=(--set "$o"); done
  if ! "$ACCEL" run "$CP_SPEC" "${sets[@]}" --run-dir "$dir" >"$dir.log" 2>&1; then
    echo "FAILED: $name (log: tail below)" >&2; tail -5 "$dir.log" >&2; continue
  fi
  python3 -c 'import json,sys; s=json.load(open(sys.argv[1])); print(json.dumps({"name": sys.argv[2], "summary": s}))' \
    "$dir/summary.json" "$name" >>"$ROWS"
done

python3 - "$ROWS" <<'PY'
import json, sys
rows = [json.loads(line) for line in open(sys.argv[1])]
def base_of(name):
    want = "dp 8, seq 1024" if "seq 1024" in name else "dp 8"
    return next((r["summary"]["tokens_per_second"] for r in rows if r["name"] == want), None)
print("| layout | tokens/s | vs dp 8 | final loss | planned bubble | measured wait per stage |")
print("|---|---:|---:|---:|---:|---|")
for r in rows:
    s = r["summary"]
    tps = s["tokens_per_second"]
    base = base_of(r["name"])
    ratio = f"{tps / base:.2f}" if base else "-"
    p = s.get("pipeline")
    planned = f'{100 * p["planned_bubble"]:.1f}%' if p else "-"
    waits = " / ".join(f"{100 * w:.1f}%" for w in p["measured_wait_per_stage"]) if p else "-"
    print(f'| {r["name"]} | {tps:,.0f} | {ratio} | {s["final_loss"]:.4f} | {planned} | {waits} |')
PY
