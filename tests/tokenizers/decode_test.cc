// Tokenizer::Decode: the tokenizer.json decoders (ByteLevel; Llama-2/Mistral's Sequence of
// Replace, ByteFallback, Fuse, Strip; Metaspace; none), special tokens with and without
// skip_special_tokens, invalid UTF-8, and SentencePiece decoding. Expected strings are those of
// Hugging Face tokenizers' Tokenizer.decode (the JavaScript reference, @lenml/tokenizers 3.7.2,
// agrees) and of spm_decode 0.1.97 on the same ids.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "common/utf8.h"
#include "tokenizers/hf_tokenizer.h"
#include "tokenizers/tokenizer.h"
#include "tests/tokenizers/tokenizer_files.h"

namespace accel::tok {
namespace {

using Ids = std::vector<uint32_t>;

using accel::testing::LoadTokenizerOrDie;

// A Llama-2-style tokenizer.json (no pre-tokenizer, byte_fallback) with the given "decoder" JSON;
// its vocabulary and merges are too small to encode words, only to decode ids.
std::unique_ptr<Tokenizer> Llama2Style(const std::string& decoder) {
  std::string text = R"({
 "added_tokens": [
  {"id": 0, "content": "<unk>", "special": true},
  {"id": 1, "content": "<s>", "special": true},
  {"id": 2, "content": "</s>", "special": true},
  {"id": 11, "content": "<tool>", "special": false}],
 "normalizer": {"type": "Sequence", "normalizers": [{"type": "Prepend", "prepend": "\u2581"},
   {"type": "Replace", "pattern": {"String": " "}, "content": "\u2581"}]},
 "post_processor": {"type": "TemplateProcessing", "single": [{"SpecialToken": {"id": "<s>", "type_id": 0}},
   {"Sequence": {"id": "A", "type_id": 0}}], "special_tokens": {"<s>": {"id": "<s>", "ids": [1], "tokens": ["<s>"]}}},
 "decoder": )" + decoder + R"(,
 "model": {"type": "BPE", "unk_token": "<unk>", "fuse_unk": true, "byte_fallback": true,
  "vocab": {"<unk>": 0, "<s>": 1, "</s>": 2, "<0x0A>": 3, "<0xE6>": 4, "<0x97>": 5, "<0xA5>": 6,
            "\u2581": 7, "\u2581Hello": 8, "\u2581world": 9, "Hello": 10},
  "merges": []}
})";
  absl::StatusOr<std::unique_ptr<HfTokenizer>> t = HfTokenizer::Parse("llama2-style.json", text);
  INFO(t.status().ToString());
  REQUIRE(t.ok());
  return std::move(*t);
}

// Llama-2's and Mistral's tokenizer.json decoder.
const char* kLlama2Decoder = R"({"type": "Sequence", "decoders": [
   {"type": "Replace", "pattern": {"String": "\u2581"}, "content": " "}, {"type": "ByteFallback"},
   {"type": "Fuse"}, {"type": "Strip", "content": " ", "start": 1, "stop": 0}]})";

TEST_CASE("byte-level: decode(encode(text)) is the text, special tokens shown or skipped") {
  auto t = LoadTokenizerOrDie("tiny_bpe.json");
  const std::string text = "It's 12345 caf\u00e9 \u65e5\u672c\n\n\tx  \U0001f642";
  CHECK(t->Decode(t->Encode(text, false)) == text);
  // <s> A </s> around it; tokenizers' decode shows them unless skip_special_tokens.
  CHECK(t->Decode(t->Encode(text)) == "<s>" + text + "</s>");
  CHECK(t->Decode(t->Encode(text), true) == text);
  CHECK(t->Decode(t->Encode("hi<|endoftext|>there")) == "<s>hi<|endoftext|>there</s>");
  CHECK(t->Decode(t->Encode("hi<|endoftext|>there"), true) == "hithere");
  // NFC normalizes before encoding, so "e" + U+0301 comes back precomposed.
  CHECK(t->Decode(t->Encode("cafe\u0301", false)) == "caf\u00e9");
  CHECK(t->Decode({}) == "");
}

TEST_CASE("byte-level: bytes that are not UTF-8 become U+FFFD, one per maximal subpart") {
  auto t = LoadTokenizerOrDie("tiny_bpe.json");
  // Ids 0-255 are the bytes. E6 97 is 日 (E6 97 A5) cut short: one U+FFFD, as from_utf8_lossy.
  CHECK(t->Decode({0xE6, 0x97, 'a'}) == "\uFFFDa");
  CHECK(t->Decode({0xE6, 0x97, 0xA5}) == "\u65e5");
  CHECK(t->Decode({0xFF, 'b', 0x80}) == "\uFFFDb\uFFFD");
  CHECK(t->Decode({0xED, 0xA0, 0x80}) == "\uFFFD\uFFFD\uFFFD");  // a UTF-16 surrogate: three subparts
  // Ids no entry has are left out.
  CHECK(t->Decode({'a', 5000, 'b'}) == "ab");
}

TEST_CASE("Llama-2 style decoder: Replace, ByteFallback, Fuse, Strip") {
  auto t = Llama2Style(kLlama2Decoder);
  // As tokenizers: "<s>" keeps the space after it (Strip removes a leading space of the whole text).
  CHECK(t->Decode({1, 8, 9}) == "<s> Hello world");
  CHECK(t->Decode({1, 8, 9}, true) == "Hello world");
  // Byte fallback: <0x0A> <0xE6> <0x97> <0xA5> is "\n日".
  CHECK(t->Decode({8, 3, 4, 5, 6}) == "Hello\n\u65e5");
  // A run of byte tokens that is not UTF-8 becomes one U+FFFD per byte token.
  CHECK(t->Decode({8, 4, 5, 9}) == "Hello\uFFFD\uFFFD world");
  CHECK(t->Decode({4, 3}) == "\uFFFD\uFFFD");
  // Only one leading space is stripped.
  CHECK(t->Decode({7, 7, 10}) == " Hello");
  // <unk> is special; <tool> is an added token that is not.
  CHECK(t->Decode({0, 9}) == "<unk> world");
  CHECK(t->Decode({0, 9}, true) == "world");
  CHECK(t->Decode({11, 9}, true) == "<tool> world");
}

TEST_CASE("Metaspace decoder and no decoder") {
  auto metaspace = Llama2Style(R"({"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "always", "split": false})");
  CHECK(metaspace->Decode({8, 9}) == "Hello world");
  // As tokenizers' Metaspace: every "▁" of the first token is dropped, not only the first.
  CHECK(metaspace->Decode({7, 8}) == " Hello");
  auto never = Llama2Style(R"({"type": "Metaspace", "replacement": "\u2581", "add_prefix_space": false})");
  CHECK(never->Decode({8, 9}) == " Hello world");
  // Without a decoder, tokenizers joins the tokens with spaces.
  auto none = Llama2Style("null");
  CHECK(none->Decode({1, 8, 9}) == "<s> \u2581Hello \u2581world");
}

TEST_CASE("SentencePiece decode: dummy prefix, byte pieces, control and unknown pieces") {
  auto t = LoadTokenizerOrDie("fortunes_bpe.model");
  CHECK(t->Decode(t->Encode("Hello, world!")) == "Hello, world!");
  // remove_extra_whitespaces is off in this model: spaces come back as they were.
  CHECK(t->Decode(t->Encode("  It's 12345.\n\ttabs  ")) == "  It's 12345.\n\ttabs  ");
  CHECK(t->Decode(t->Encode("\u65e5\u672c \u00e9")) == "\u65e5\u672c \u00e9");
  // spm_decode's strings for these ids: 906 is "▁", 546 "▁It", 1 <s>, 0 <unk>, 233 <0xE6>, 154 <0x97>.
  CHECK(t->Decode({1, 906, 906, 546}) == "  It");
  CHECK(t->Decode({906, 546}) == " It");
  CHECK(t->Decode({546}) == "It");
  CHECK(t->Decode({0, 906, 546}) == " \u2047   It");
  CHECK(t->Decode({233, 154, 906, 546}) == "\uFFFD\uFFFD  It");
  CHECK(t->Decode({233, 154, 168}) == "\u65e5");
  // Control pieces are always left out; skip_special_tokens changes nothing.
  CHECK(t->Decode({1, 546, 2}, true) == t->Decode({1, 546, 2}, false));
  CHECK(t->Decode({546, 1000, 5000}) == "It");
}

TEST_CASE("DecodeUtf8Lossy replaces maximal subparts") {
  CHECK(DecodeUtf8Lossy("ok \xC3\xA9") == "ok \xC3\xA9");
  CHECK(DecodeUtf8Lossy("\xF0\x9F\x99") == "\uFFFD");
  CHECK(DecodeUtf8Lossy("\xF0\x9F\x99x\xC0\xAF") == "\uFFFDx\uFFFD\uFFFD");
  CHECK(ReplaceInvalidUtf8("\xF0\x9F\x99x") == "\uFFFD\uFFFD\uFFFDx");
}

}  // namespace
}  // namespace accel::tok
