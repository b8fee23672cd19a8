#!/usr/bin/env bash
# Training throughput on one CUDA GPU: accel run against PyTorch eager and Hugging Face
# transformers' LlamaForCausalLM, all in this one invocation on the same machine, for a ~1B Llama
# (TinyLlama-1.1B dimensions) at seq_len 2048 in bf16.
#
#   scripts/build-cuda.sh && bench/gpu/throughput.sh [OUT_DIR]
#   bench/gpu/throughput.sh --table OUT_DIR/throughput.jsonl   # the table of the rows so far
#
# The micro batch is the largest that accel's estimate says fits the GPU (`accel validate` passes;
# 16 down to 1), the same for every implementation. Precision `amp`: fp32 parameters with bf16
# autocast (accel precision {params: fp32, compute: bf16}); `bf16`: bf16 parameters with fp32 master
# weights. Each runs WARMUP + STEPS optimizer steps; tokens/s is the mean over the timed steps.
#
# MFU = tokens/s x FLOPs per token / peak, with FLOPs per token = 6·N + 12·L·h·s (PaLM, Chowdhery et
# al. 2022, appendix B: N the parameters in matrix multiplies -- every parameter but the input
# embedding -- and the attention score and value products, counted without the causal halving),
# and peak = PEAK_TFLOPS (default 989.4: H100 SXM dense bf16, NVIDIA H100 Tensor Core GPU
# datasheet; use 989.4 for H200 too, same tensor cores).
#
# Environment: PRECISIONS (the subset, default "amp bf16"), STEPS (default 10), WARMUP (default 3),
# SEQ (default 2048), PEAK_TFLOPS, ACCEL_CUDA_BUILD (default build-cuda). An implementation that
# fails is a row naming its error, and the runs go on; each row goes to OUT_DIR/throughput.jsonl as
# its run ends.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=${ACCEL_CUDA_BUILD:-$root/build-cuda}
out=${1:-$root/bench-gpu-out}
steps=${STEPS:-10}
warmup=${WARMUP:-3}
seq=${SEQ:-2048}
peak=${PEAK_TFLOPS:-989.4}
precisions=${PRECISIONS:-amp bf16}

# The table of a results file (also: throughput.sh --table JSONL, for a run stopped early).
table() {
python3 - "$1" "$peak" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
peak = float(sys.argv[2]) * 1e12
h, L, V, ffn, kvh = 2048, 22, 32000, 5632, 4 * 64
n_matmul = L * (2 * h * h + 2 * h * kvh + 3 * h * ffn) + V * h  # blocks + lm_head
print(f"{'impl':16} {'precision':9} {'mb':>3} {'tokens/s':>10} {'MFU':>6} {'vs eager':>9} "
      f"{'alloc GiB':>9} {'reserved':>9} {'loss':>7}")
for precision in dict.fromkeys(r["precision"] for r in rows):
    group = [r for r in rows if r["precision"] == precision]
    eager = next((r for r in group if r["impl"] == "pytorch-eager" and "tokens_per_second" in r), None)
    for r in group:
        if "error" in r:
            print(f"{r['impl']:16} {precision:9} {r['micro_batch']:>3}  failed: {r['error']}")
            continue
        flops = 6 * n_matmul + 12 * L * h * r["seq_len"]
        mfu = r["tokens_per_second"] * flops / peak
        ratio = r["tokens_per_second"] / eager["tokens_per_second"] if eager else float("nan")
        print(f"{r['impl']:16} {precision:9} {r['micro_batch']:>3} {r['tokens_per_second']:>10.0f} "
              f"{100 * mfu:>5.1f}% {ratio:>8.2f}x {r['peak_allocated'] / 2**30:>9.2f} "
              f"{r['peak_reserved'] / 2**30:>9.2f} {r['loss'] if r['loss'] is not None else float('nan'):>7.3f}")
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

spec=$out/tinyllama.yaml
cat >"$spec" <<EOF
version: 1
name: tinyllama-bench
model: {arch: llama, hidden_size: 2048, num_layers: 22, num_heads: 32, num_kv_heads: 4, ffn_hidden_size: 5632, vocab_size: 32000, max_seq_len: $seq, rope_theta: 10000}
data:
  train: {path: $fortunes, format: text, tokenizer: bytes}
  seq_len: $seq
  micro_batch_size: 1
training:
  steps: $((warmup + steps))
  log_every_steps: 1
  sample_tokens: 0
  optimizer: {name: adamw, lr: 1.0e-4, weight_decay: 0.1}
precision: {params: fp32, compute: bf16}
checkpoint: {dir: $out/ckpt, keep: 1, at_end: false, resume: never}
cluster: {nodes: 1, devices_per_node: 1, device: cuda, device_model: h100-80gb}
EOF

precision_sets() {
  case $1 in
    amp) echo "--set precision.params=fp32 --set precision.compute=bf16" ;;
    bf16) echo "--set precision.params=bf16 --set precision.compute=bf16 --set precision.reduce=bf16" ;;
  esac
}

results=$out/throughput.jsonl
: >"$results"
# A failed run: one row naming the implementation and the last line of its log.
error_row() {  # impl precision micro_batch log
  python3 -c 'import json, sys
print(json.dumps({"impl": sys.argv[1], "precision": sys.argv[2], "micro_batch": int(sys.argv[3]),
                  "error": sys.argv[4][:300]}))' "$1" "$2" "$3" "$(tail -1 "$4" 2>/dev/null)"
}
for precision in $precisions; do
  sets=$(precision_sets "$precision")
  mb=0
  for try in 16 12 10 8 6 5 4 3 2 1; do
    # shellcheck disable=SC2086
    if "$accel" validate "$spec" $sets --set data.micro_batch_size=$try --set data.global_batch_size=$try >/dev/null 2>&1; then
      mb=$try
      break
    fi
  done
  if [[ $mb -eq 0 ]]; then
    echo "throughput: no micro batch fits for $precision" | tee "$out/validate-$precision.log" >&2
    error_row accel "$precision" 0 "$out/validate-$precision.log" >>"$results"
    continue
  fi
  echo "== $precision: micro batch $mb (largest the estimate fits)"
  rm -rf "$out/run-$precision" "$out/ckpt"
  # shellcheck disable=SC2086
  if ! "$accel" run "$spec" $sets --set data.micro_batch_size=$mb --set data.global_batch_size=$mb \
    --run-dir "$out/run-$precision" >"$out/accel-$precision.log" 2>&1; then
    tail -20 "$out/accel-$precision.log"
    error_row accel "$precision" "$mb" "$out/accel-$precision.log" >>"$results"
  else
    python3 - "$out/run-$precision" "$warmup" "$precision" "$mb" "$seq" >>"$results" \
      2>>"$out/accel-$precision.log" <<'PY' ||
import json, sys
run, warmup, precision, mb, seq = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
steps = [json.loads(l) for l in open(f"{run}/metrics.jsonl")]
timed = steps[warmup:]
mean = sum(s["step_seconds"] for s in timed) / len(timed)
summary = json.load(open(f"{run}/summary.json"))
rank = summary["memory"]["ranks"][0]
print(json.dumps({"impl": "accel", "precision": precision, "micro_batch": mb, "seq_len": seq,
                  "step_seconds": mean, "tokens_per_second": mb * seq / mean,
                  "loss": steps[-1]["loss"], "peak_allocated": rank["peak_tensor_bytes"],
                  "peak_reserved": rank["peak_reserved_bytes"],
                  "estimate": rank["estimate_tensor_bytes"]}))
PY
      error_row accel "$precision" "$mb" "$out/accel-$precision.log" >>"$results"
  fi
  for impl in eager hf; do
    PYTHONUNBUFFERED=1 python3 "$root/bench/gpu/torch_llama.py" --impl $impl --micro-batch $mb \
      --seq-len "$seq" --steps "$steps" --warmup "$warmup" --precision "$precision" \
      >>"$results" 2>"$out/$impl-$precision.err" ||
      error_row "$([[ $impl == eager ]] && echo pytorch-eager || echo hf-transformers)" "$precision" "$mb" \
        "$out/$impl-$precision.err" >>"$results"
  done
done

table "$results"
