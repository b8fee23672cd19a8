#!/usr/bin/env bash
# accel run vs. PyTorch DistributedDataParallel on the same job, in one invocation.
#
#   bench/ddp_bench/run.sh [STEPS]          (default 40 optimizer steps each)
#   ACCEL=build/cli/accel THREADS=1 WORLD=2 bench/ddp_bench/run.sh
#
# Both sides train the same byte-level GPT-2 (h=192, 4 layers, 4 heads, vocab 256, 256 positions),
# seq 128, micro batch 16 per rank, WORLD ranks of data parallelism over Gloo on this machine,
# AdamW(lr 1e-3, betas 0.9/0.95, wd 0.1 on matrices), warmup 30 + cosine, clip 1.0, THREADS
# intra-op threads per rank, on the fortune files. Reported:
#   tokens/s     global tokens per second over the steps after the first SKIP (wall clock between
#                step completions on rank 0: everything a step costs, logging included)
#   launch to first step  seconds from starting the command (as seen by this script) to the end
#                of the first optimizer step on rank 0
# Benchmarks are run by hand, never asserted on in tests.
set -euo pipefail

STEPS=${1:-${STEPS:-40}}
SKIP=${SKIP:-5}
THREADS=${THREADS:-1}
WORLD=${WORLD:-2}
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
  micro_batch_size: 16
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

echo "== accel run ($WORLD ranks, $THREADS thread(s) each, $STEPS steps)"
ACCEL_T0=$(date +%s.%N)
"$ACCEL" run "$WORK/job.yaml" --run-dir "$WORK/run" --threads-per-worker "$THREADS" \
  > "$WORK/accel.out" 2> "$WORK/accel.err" || {
  echo "error: accel run failed:" >&2; cat "$WORK/accel.err" >&2; exit 4; }
grep -E '^(step |first step)' "$WORK/accel.out" | tail -3

echo "== PyTorch DDP ($WORLD ranks, $THREADS thread(s) each, $STEPS steps)"
DDP_T0=$(date +%s.%N)
"$PY" "$HERE/ddp_baseline.py" --data "$DATA" --world "$WORLD" --threads "$THREADS" \
  --steps "$STEPS" --skip-steps "$SKIP" > "$WORK/ddp.json"

"$PY" - "$WORK/run/metrics.jsonl" "$WORK/ddp.json" "$SKIP" "$ACCEL_T0" "$DDP_T0" <<'PYEOF'
import json, sys
metrics = [json.loads(l) for l in open(sys.argv[1])]
ddp = json.load(open(sys.argv[2]))
skip = min(int(sys.argv[3]), len(metrics) - 2)
accel_t0, ddp_t0 = float(sys.argv[4]), float(sys.argv[5])
t = [m["since_launch_seconds"] for m in metrics]
tokens = metrics[-1]["tokens"] - metrics[skip]["tokens"]
accel_tps = tokens / (t[-1] - t[skip])
print()
print(f"{'':22}{'accel run':>14}{'PyTorch DDP':>14}")
print(f"{'tokens/s':22}{accel_tps:14.0f}{ddp['tokens_per_second']:14.0f}")
print(f"{'launch to first step':22}{metrics[0]['unix_time'] - accel_t0:13.2f}s"
      f"{ddp['first_step_unix_time'] - ddp_t0:13.2f}s")
print(f"{'final loss':22}{metrics[-1]['loss']:14.4f}{ddp['final_loss']:14.4f}")
print(f"ratio accel/DDP tokens/s: {accel_tps / ddp['tokens_per_second']:.3f}")
PYEOF
