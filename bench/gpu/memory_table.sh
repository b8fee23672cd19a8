#!/usr/bin/env bash
# Measured peak CUDA memory against accel's estimate on one GPU, over single-GPU layouts (micro
# batch, sequence length, recompute, precision): each layout trains STEPS steps with `accel run`,
# whose summary.json holds the caching allocator's peak allocated and reserved bytes and the plan's
# estimate of tensor bytes (every device term except runtime_overhead).
#
#   scripts/build-cuda.sh && bench/gpu/memory_table.sh [OUT_DIR]
#   bench/gpu/memory_table.sh --table OUT_DIR/memory/memory.jsonl   # the table of the rows so far
#
# The model is a ~250M Llama (h 1024, 16 layers, 16 heads, 4 kv heads, ffn 2816, vocab 32000) so
# that all layouts run in a few minutes. A layout that fails is a row naming its error, and the
# table goes on with the next.
#
# Environment: LAYOUTS, an extended regular expression: only the layouts whose names match (e.g.
# 'amp s1024 b4$|^bf16'; default all); STEPS (default 3); ACCEL_CUDA_BUILD (default build-cuda).
# DEVICE=cpu rehearses the script on the CPU with a tiny Llama (h 64, 2 layers, vocab 256) and the
# CPU's counting allocator, no CUDA numbers (scripts/gpu-verify.sh --cpu; ACCEL_CUDA_BUILD then
# names a CPU build). The selected layout names go to OUT_DIR/memory/layouts.txt before the first
# run, each row to OUT_DIR/memory/memory.jsonl as its layout ends.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=${ACCEL_CUDA_BUILD:-$root/build-cuda}
out=${1:-$root/bench-gpu-out}/memory
steps=${STEPS:-3}
device=${DEVICE:-cuda}
select=${LAYOUTS:-}

# The table of a results file (also: memory_table.sh --table JSONL, for a run stopped early).
table() {
python3 - "$1" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
# GiB, or MiB where every estimate is under 1 GiB (the CPU rehearsal's tiny model).
G, unit = 2**30, "GiB"
if all(r.get("estimate", 0) < 2**30 for r in rows):
    G, unit = 2**20, "MiB"
print(f"{'layout':26} {'estimate':>9} {'allocated':>9} {'alloc/est':>9} {'reserved':>9} {'resv/est':>8}  ({unit})")
within = 0
for r in rows:
    if "error" in r:
        print(f"{r['layout']:26} failed: {r['error']}")
        continue
    a, e, v = r["allocated"], r["estimate"], r["reserved"]
    within += abs(a / e - 1) <= 0.05
    reserved = f"{v / G:9.2f} {v / e:8.3f}" if v is not None else f"{'-':>9} {'-':>8}"
    print(f"{r['layout']:26} {e / G:9.2f} {a / G:9.2f} {a / e:9.3f} {reserved}")
print(f"{within} of {len(rows)} layouts within 5% (allocated vs estimate)")
PY
}
if [[ ${1:-} == --table ]]; then
  table "$2"
  exit
fi

if [[ -f $build/env.sh ]]; then
  # shellcheck source=/dev/null
  source "$build/env.sh"
fi
accel=$build/cli/accel
mkdir -p "$out"
fortunes=$build/deps/usr/share/games/fortunes
[[ -e $fortunes ]] || fortunes=/usr/share/games/fortunes

model="{arch: llama, hidden_size: 1024, num_layers: 16, num_heads: 16, num_kv_heads: 4, ffn_hidden_size: 2816, vocab_size: 32000, max_seq_len: 4096}"
cluster="{nodes: 1, devices_per_node: 1, device: cuda, device_model: h100-80gb}"
if [[ $device == cpu ]]; then
  model="{arch: llama, hidden_size: 64, num_layers: 2, num_heads: 4, num_kv_heads: 2, ffn_hidden_size: 176, vocab_size: 256, max_seq_len: 4096}"
  cluster="{nodes: 1, devices_per_node: 1, device: cpu, device_memory: 4GiB}"
fi

spec=$out/llama-250m.yaml
cat >"$spec" <<EOF
version: 1
name: memory-table
model: $model
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
cluster: $cluster
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
  "amp s1024 b4 moe 8 experts top-2|--set model.moe.num_experts=8 --set model.moe.experts_per_token=2 --set model.moe.expert_ffn_size=704 --set model.moe.router_aux_loss_coef=0.01"
)

selected=()
for entry in "${layouts[@]}"; do
  if [[ -z $select ]] || grep -qE -- "$select" <<<"${entry%%|*}"; then
    selected+=("$entry")
  fi
done
[[ ${#selected[@]} -gt 0 ]] || { echo "memory_table: no layout matches LAYOUTS='$select'" >&2; exit 1; }
printf '%s\n' "${selected[@]%%|*}" >"$out/layouts.txt"

# A failed layout: one row with the first error line of its log (else the log's last line).
error_row() {
  local message
  message=$(grep -m1 -i error "$2" || tail -1 "$2")
  python3 -c 'import json, sys; print(json.dumps({"layout": sys.argv[1], "error": sys.argv[2][:300]}))' \
    "$1" "$message"
}

results=$out/memory.jsonl
: >"$results"
for entry in "${selected[@]}"; do
  name=${entry%%|*}
  sets=${entry#*|}
  dir=$out/run-${name// /_}
  rm -rf "$dir" "$out/ckpt"
  # shellcheck disable=SC2086
  if ! "$accel" run "$spec" $sets --run-dir "$dir" >"$dir.log" 2>&1; then
    error_row "$name" "$dir.log" >>"$results"
    continue
  fi
  python3 - "$dir" "$name" >>"$results" 2>>"$dir.log" <<'PY' || error_row "$name" "$dir.log" >>"$results"
import json, sys
summary = json.load(open(f"{sys.argv[1]}/summary.json"))
rank = summary["memory"]["ranks"][0]
print(json.dumps({"layout": sys.argv[2], "estimate": rank["estimate_tensor_bytes"],
                  "allocated": rank["peak_tensor_bytes"], "reserved": rank.get("peak_reserved_bytes"),
                  "terms": summary["memory"]["estimate"][0]["terms"]}))
PY
done

table "$results"
