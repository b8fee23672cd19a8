#!/usr/bin/env bash
# What each rank copies out of a model.init_from checkpoint (executor/models/pretrained_init.h):
# a Llama-shaped Hugging Face checkpoint of random bf16 weights at Llama-2-7B widths (hidden 4096,
# ffn 11008, 32 heads, 8 kv heads; 2 layers, vocabulary 4096: 776 MB, make_checkpoint.py on
# Debian's python3-torch), started from by a 1-step CPU job whole, with tensor parallelism 2, with
# pipeline parallelism 2, with ZeRO-3 over 2 ranks and with tp 2 x ZeRO-3 over 2. Prints each
# rank's "init_from ...: copied N bytes of T tensors (W bytes whole) ..., P pages" log line. About 3 minutes and 7 GB of memory on 2 cores.
#
#   bench/init_from_bench/run.sh
#
# Benchmarks are run by hand, never asserted on in tests.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
ACCEL=${ACCEL:-$ROOT/build/cli/accel}
WORK=$(mktemp -d /tmp/accel-init-from-bench.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
cd "$WORK"

mkdir ckpt
/usr/bin/python3 "$HERE/make_checkpoint.py" ckpt/model.safetensors
cat > job.yaml <<'YAML'
version: 1
name: init-from-bench
model:
  arch: llama
  hidden_size: 4096
  num_layers: 2
  num_heads: 32
  num_kv_heads: 8
  ffn_hidden_size: 11008
  vocab_size: 4096
  max_seq_len: 64
  tie_word_embeddings: false
  init_from: ckpt
data:
  train: {path: /usr/share/games/fortunes/cookie, format: text, tokenizer: bytes}
  seq_len: 16
  micro_batch_size: 1
training:
  steps: 1
  optimizer: {name: sgd, lr: 1.0e-9}
  log_every_steps: 1
precision: {params: fp32, compute: fp32, reduce: fp32}
parallel: {data_replicate: 1}
checkpoint: {every_steps: 0, at_end: false, resume: never}
cluster: {nodes: 1, devices_per_node: 1, device: cpu, device_memory: 64GiB}
YAML

run() {
  local name=$1
  shift
  echo "== $name"
  "$ACCEL" run job.yaml "$@" >"$name.out" 2>"$name.err" || { tail -20 "$name.err"; exit 1; }
  grep -h "init_from" runs/init-from-bench/rank*.log | sed 's/^.*\(rank [0-9]*: init_from\)/\1/'
}
run whole
run "tensor parallel 2" --set parallel.tensor=2 --set cluster.devices_per_node=2
run "pipeline parallel 2" --set parallel.pipeline=2 --set cluster.devices_per_node=2
run "ZeRO-3 over 2 ranks" --set sharding.stage=3 --set parallel.data_shard=2 --set cluster.devices_per_node=2
run "tensor parallel 2 x ZeRO-3 over 2" --set sharding.stage=3 --set parallel.data_shard=2 --set parallel.tensor=2 \
  --set cluster.devices_per_node=4
