#!/usr/bin/env bash
# accel run vs. PyTorch DistributedDataParallel on the same job, in one invocation.
#
#   bench/ddp_bench/run.sh [STEPS]          (default 40 optimizer steps each)
#   ACCEL=build/cli/accel THREADS=1 WORLD=2 bench/ddp_bench/run.sh
#   WORLD=4 MICRO=8 STAGES="0 1 2 3" bench/ddp_bench/run.sh 30    (accel at every ZeRO stage)
#
# STAGES lists the sharding stages accel runs (default "0"; stages >= 1 shard over all WORLD
# ranks). PyTorch's own FSDP cannot be the reference: Debian's python3-torch 1.13 fails to import
# torch.distributed.fsdp under Python 3.11 ("mutable default ... TensorProperties"), so every
# stage is compared with DDP.
#
# Both sides train the same byte-level GPT-2 (h=192, 4 layers, 4 heads, vocab 256, 256 positions),
# seq 128, micro batch MICRO (default 16) per rank, WORLD ranks of data parallelism over Gloo on this machine,
# AdamW(lr 1e-3, betas 0.9/0.95, wd 0.1 on matrices), warmup 30 + cosine, clip 1.0, THREADS
# intra-op threads per rank, on the fortune files. Reported:
#   tokens/s     global tokens per second over the steps after the first SKIP (wall clock between
#                step completions on rank 0: everything a step costs, logging included)
#   launch to first step  seconds from starting the command (as seen by this script) to the end
#                of the first optimizer step on rank 0
#   peak memory  accel: the largest peak of live tensor bytes over the ranks (counting allocator)
#                and the largest peak RSS; DDP: rank 0's peak RSS
# Benchmarks are run by hand, never asserted on in tests.
set -euo pipefail

STEPS=${1:-${STEPS:-40}}
SKIP=${SKIP:-5}
THREADS=${THREADS:-1}
WORLD=${WORLD:-2}
MICRO=${MICRO:-16}
STAGES=${STAGES:-0}
DATA=${DATA:-/usr/share/games/fortunes}
PY=/usr/bin/python3   # Debian's interpreter: it has python3-torch (another python3 may not)
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
ACCEL=${ACCEL:-}
if [[ -z "$ACCEL" ]]; then
  for candidate in "$ROOT/build/cli/accel" "$ROOT/build/accel"; do
    [[ -x "$candidate" ]] && ACCEL=$candidate && break
  done
fi
if [[ -z "$ACCEL" || ! -x "$ACCEL" ]]; then
  echo "error: accel binary not found; build it (make build) or set ACCEL=path" >&2
  exit 2
fi
if ! "$PY" -c 'import torch' 2>/dev/null; then
  echo "error: $PY cannot import torch (apt-get install python3-torch)" >&2
  exit 2
fi

WORK=$(mktemp -d "${TMPDIR:-/tmp}/accel_ddp_bench.XXXXXX")
trap 'rm -rf "$WORK"' EXIT

cat > "$WORK/job.yaml" <<YAML
version: 1
name: ddp-bench
model: {arch: gpt2, hidden_size: 192, num_layers: 4, num_heads: 4, vocab_size: 256, max_seq_len: 256}
data:
  train: {path: $DATA, format: text, tokenizer: bytes}
  seq_len: 128
  micro_batch_size: $MICRO
  global_batch_size: auto
training:
  steps: $STEPS
  log_every_steps: 10
  optimizer: {name: adamw, lr: 1.0e-3, betas: [0.9, 0.95], weight_decay: 0.1}
  lr_schedule: {name: cosine, warmup_steps: 30}
  grad_clip_norm: 1.0
  seed: 1234
precision: {params: fp32, compute: fp32, reduce: fp32}
parallel: {data_replicate: auto}
sharding: {stage: 0}
checkpoint: {dir: $WORK/ckpt, every_steps: 0, keep: 1, resume: never}
cluster: {nodes: 1, devices_per_node: $WORLD, device: cpu, device_memory: 8GiB}
YAML

for STAGE in $STAGES; do
  SETS=()
  if [[ "$STAGE" != 0 ]]; then
    SETS=(--set sharding.stage="$STAGE" --set parallel.data_shard="$WORLD" --set parallel.data_replicate=1)
  fi
  echo "== accel run, ZeRO stage $STAGE ($WORLD ranks, $THREADS thread(s) each, $STEPS steps)"
  T0=$(date +%s.%N)
  echo "$T0" > "$WORK/t0-$STAGE"
  "$ACCEL" run "$WORK/job.yaml" "${SETS[@]}" --run-dir "$WORK/run-$STAGE" \
    --threads-per-worker "$THREADS" > "$WORK/accel-$STAGE.out" 2> "$WORK/accel-$STAGE.err" || {
    echo "error: accel run failed:" >&2; cat "$WORK/accel-$STAGE.err" >&2; exit 4; }
  grep -E '^(step |first step)' "$WORK/accel-$STAGE.out" | tail -2
done

echo "== PyTorch DDP ($WORLD ranks, $THREADS thread(s) each, $STEPS steps)"
DDP_T0=$(date +%s.%N)
"$PY" "$HERE/ddp_baseline.py" --data "$DATA" --world "$WORLD" --threads "$THREADS" \
  --steps "$STEPS" --skip-steps "$SKIP" --micro-batch "$MICRO" > "$WORK/ddp.json"

"$PY" - "$WORK" "$SKIP" "$DDP_T0" $STAGES <<'PYEOF'
import json, sys
work, skip_arg, ddp_t0, stages = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), sys.argv[4:]
ddp = json.load(open(f"{work}/ddp.json"))
mib = lambda b: b / 2**20
print()
print(f"{'':22}{'tokens/s':>10}{'first step':>12}{'final loss':>12}{'tensor MiB':>12}{'RSS MiB':>10}{'vs DDP':>8}")
for stage in stages:
    metrics = [json.loads(l) for l in open(f"{work}/run-{stage}/metrics.jsonl")]
    summary = json.load(open(f"{work}/run-{stage}/summary.json"))
    t0 = float(open(f"{work}/t0-{stage}").read())
    skip = min(skip_arg, len(metrics) - 2)
    t = [m["since_launch_seconds"] for m in metrics]
    tps = (metrics[-1]["tokens"] - metrics[skip]["tokens"]) / (t[-1] - t[skip])
    ranks = summary["memory"]["ranks"]
    tensor = max(r["peak_tensor_bytes"] for r in ranks)
    rss = max(r["peak_resident_bytes"] for r in ranks)
    print(f"{'accel ZeRO-' + stage:22}{tps:10.0f}{metrics[0]['unix_time'] - t0:11.2f}s"
          f"{metrics[-1]['loss']:12.4f}{mib(tensor):12.2f}{mib(rss):10.1f}"
          f"{tps / ddp['tokens_per_second']:8.3f}")
print(f"{'PyTorch DDP':22}{ddp['tokens_per_second']:10.0f}{ddp['first_step_unix_time'] - ddp_t0:11.2f}s"
      f"{ddp['final_loss']:12.4f}{'-':>12}{mib(ddp['peak_rss_bytes']):10.1f}{1:8.3f}")
PYEOF
