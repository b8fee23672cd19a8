#!/usr/bin/env bash
# Measured peak CUDA memory against accel's estimate on one GPU, over single-GPU layouts (micro
# batch, sequence length, recompute, precision): each layout trains STEPS steps with `accel run`,
# whose summary.json holds the caching allocator's peak allocated and reserved bytes and the plan's
# estimate of tensor bytes (every device term except runtime_overhead).
#
#   scripts/build-cuda.sh && bench/gpu/memory_table.sh [OUT_DIR]
#
# The model is a ~250M Llama (h 1024, 16 layers, 16 heads, 4 kv heads, ffn 2816, vocab 32000) so
# that all layouts run in a few minutes.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=${ACCEL_CUDA_BUILD:-$root/build-cuda}
out=${1:-$root/bench-gpu-out}/memory
steps=${STEPS:-3}
# shellcheck source=/dev/null
source "$build/env.sh"
accel=$build/cli/accel
mkdir -p "$out"
fortunes=$build/deps/usr/share/games/fortunes
[[ -e $fortunes ]] || fortunes=/usr/share/games/fortunes

spec=$out/llama-250m.yaml
cat >"$spec" <<EOF
version: 1
name: memory-table
model: {arch: llama, hidden_size: 1024, num_layers: 16, num_heads: 16, num_kv_heads: 4, ffn_hidden_size: 2816, vocab_size: 32000, max_seq_len: 4096}
data:
  train: {path: $fortunes, format: text, tokenizer: bytes}
  seq_len: 1024
  micro_batch_size: 4
training:
  steps: $steps
  log_every_steps: 1
  sample_tokens: 0
  optimizer: {name: adamw, lr: 1.0e-4}
precision: {params: fp32, compute: bf16}
checkpoint: {dir: $out/ckpt, keep: 1, at_end: false, resume: never}
cluster: {nodes: 1, devices_per_node: 1, device: cuda, device_model: h100-80gb}
EOF

# name | --set overrides
layouts=(
  "amp s1024 b4|"
  "amp s1024 b1|--set data.micro_batch_size=1"
  "amp s1024 b8|--set data.micro_batch_size=8"
  "amp s512 b8|--set data.seq_len=512 --set data.micro_batch_size=8"
  "amp s2048 b2|--set data.seq_len=2048 --set data.micro_batch_size=2"
  "amp s4096 b1|--set data.seq_len=4096 --set data.micro_batch_size=1"
  "amp s1024 b4 selective|--set training.recompute=selective"
  "amp s1024 b4 full|--set training.recompute=full"
  "amp s2048 b4 full|--set data.seq_len=2048 --set training.recompute=full"
  "fp32 s1024 b4|--set precision.compute=fp32"
  "fp32 s1024 b4 selective|--set precision.compute=fp32 --set training.recompute=selective"
  "bf16 s1024 b4|--set precision.params=bf16 --set precision.reduce=bf16"
  "bf16 s2048 b4|--set precision.params=bf16 --set precision.reduce=bf16 --set data.seq_len=2048"
  "bf16 s1024 b4 full|--set precision.params=bf16 --set precision.reduce=bf16 --set training.recompute=full"
  "amp s1024 b4 accum2|--set data.global_batch_size=8"
  "amp s1024 b4 offload|--set sharding.stage=1 --set sharding.offload=optimizer"
)

results=$out/memory.jsonl
: >"$results"
for entry in "${layouts[@]}"; do
  name=${entry%%|*}
  sets=${entry#*|}
  dir=$out/run-${name// /_}
  rm -rf "$dir" "$out/ckpt"
  # shellcheck disable=SC2086
  if ! "$accel" run "$spec" $sets --run-dir "$dir" >"$dir.log" 2>&1; then
    echo "{\"layout\": \"$name\", \"error\": \"$(grep -m1 -i error "$dir.log" | tr '"' "'")\"}" >>"$results"
    continue
  fi
  python3 - "$dir" "$name" >>"$results" <<'PY'
import json, sys
summary = json.load(open(f"{sys.argv[1]}/summary.json"))
rank = summary["memory"]["ranks"][0]
print(json.dumps({"layout": sys.argv[2], "estimate": rank["estimate_tensor_bytes"],
                  "allocated": rank["peak_tensor_bytes"], "reserved": rank["peak_reserved_bytes"],
                  "terms": summary["memory"]["estimate"][0]["terms"]}))
PY
done

python3 - "$results" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
G = 2**30
print(f"{'layout':26} {'estimate':>9} {'allocated':>9} {'alloc/est':>9} {'reserved':>9} {'resv/est':>8}  (GiB)")
within = 0
for r in rows:
    if "error" in r:
        print(f"{r['layout']:26} failed: {r['error']}")
        continue
    a, e, v = r["allocated"], r["estimate"], r["reserved"]
    within += abs(a / e - 1) <= 0.05
    print(f"{r['layout']:26} {e / G:9.2f} {a / G:9.2f} {a / e:9.3f} {v / G:9.2f} {v / e:8.3f}")
print(f"{within} of {len(rows)} layouts within 5% (allocated vs estimate)")
PY
