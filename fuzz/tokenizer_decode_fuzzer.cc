// libFuzzer target: decoding token ids back to text (tok::Tokenizer::Decode, what the executor
// prints for training.sample_tokens), with the repository's own tokenizer files loaded once, and
// the tokenizer.json "decoder" section (tok::MakeDecoder) on its own.
//
// Input: one flag byte, then the rest. Bit 0 of the flag is skip_special_tokens; (flag >> 1) % 3
// picks what decodes:
//   0  tests/testdata/tokenizers/tiny_bpe.json (byte-level BPE, ByteLevel decoder, special added
//      tokens); the rest is little-endian uint32 ids, any value (a short tail is dropped);
//   1  tests/testdata/tokenizers/fortunes_bpe.model (SentencePiece BPE with byte fallback, trained by
//      spm_train); the rest as in 0;
//   2  a decoder: the rest is a "decoder" JSON value, then "\n--accel-fuzz-tokens--\n" and the
//      tokens it decodes, one per line (made valid UTF-8, as every tokenizer.json string is).
//
// Invariants (tokenizers/tokenizer.h, Tokenizer::Decode): the text is valid UTF-8; ids at or past
// id_limit() are left out (decoding without them gives the same text); with skip_special_tokens a
// tokenizer.json leaves out the added tokens marked "special" (the same text as decoding without
// them), and SentencePiece is unchanged by it and leaves out control pieces (its BOS). A decoder
// that does not build is a located error ("decoder.json:LINE:COL: ..."); one that builds turns
// valid UTF-8 tokens into valid UTF-8 text (tokenizer.json's decode relies on it).
#include <cstddef>
#include <cstdint>
#include <fstream>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/json_document.h"
#include "common/utf8.h"
#include "data/text_source.h"
#include "fuzz/fuzz_util.h"
#include "tokenizers/decoder.h"
#include "tokenizers/tokenizer.h"

namespace {

using accel::tok::Tokenizer;
using Ids = std::vector<uint32_t>;

std::string DataPath(const char* name) {
  return std::string(ACCEL_SOURCE_ROOT) + "/tests/testdata/tokenizers/" + name;
}

std::unique_ptr<Tokenizer> LoadOrDie(const char* name) {
  absl::StatusOr<std::unique_ptr<Tokenizer>> t = Tokenizer::Load(DataPath(name));
  if (!t.ok()) accel::fuzz::Fail(__FILE__, __LINE__, std::string(t.status().message()));
  return std::move(*t);
}

// The ids of tokenizer.json's added tokens marked "special", read from the file by this harness.
std::set<uint32_t> SpecialIds(const char* name) {
  std::ifstream in(DataPath(name));
  std::stringstream text;
  text << in.rdbuf();
  const nlohmann::json file = nlohmann::json::parse(text.str());
  std::set<uint32_t> ids;
  for (const nlohmann::json& token : file.at("added_tokens")) {
    if (token.value("special", false)) ids.insert(token.at("id").get<uint32_t>());
  }
  if (ids.empty()) accel::fuzz::Fail(__FILE__, __LINE__, std::string(name) + " has no special tokens");
  return ids;
}

struct Loaded {
  std::unique_ptr<Tokenizer> byte_level = LoadOrDie("tiny_bpe.json");
  std::set<uint32_t> byte_level_special = SpecialIds("tiny_bpe.json");
  std::unique_ptr<Tokenizer> sentencepiece = LoadOrDie("fortunes_bpe.model");
};

const Loaded& Tokenizers() {
  static const Loaded* loaded = new Loaded;
  return *loaded;
}

template <typename Keep>
Ids Filtered(const Ids& ids, Keep keep) {
  Ids out;
  for (uint32_t id : ids) {
    if (keep(id)) out.push_back(id);
  }
  return out;
}

void CheckDecode(const Tokenizer& t, const std::set<uint32_t>* special, const Ids& ids, bool skip) {
  const std::string text = t.Decode(ids, skip);
  ACCEL_FUZZ_CHECK(accel::IsValidUtf8(text), "decoded text is not valid UTF-8");
  const Ids known = Filtered(ids, [&](uint32_t id) { return id < t.id_limit(); });
  ACCEL_FUZZ_CHECK(t.Decode(known, skip) == text, "an id at or past id_limit() changed the text");
  if (special != nullptr) {
    // tokenizer.json: skip_special_tokens leaves out exactly the special added tokens.
    const Ids plain = Filtered(ids, [&](uint32_t id) { return special->count(id) == 0; });
    ACCEL_FUZZ_CHECK(t.Decode(ids, true) == t.Decode(plain, false), "skip_special_tokens differs from leaving them out");
  } else {
    // SentencePiece: skip_special_tokens changes nothing; control pieces (BOS) always vanish.
    ACCEL_FUZZ_CHECK(t.Decode(ids, !skip) == text, "skip_special_tokens changed a SentencePiece decode");
    const Ids no_bos = Filtered(ids, [&](uint32_t id) {
      for (uint32_t bos : t.prefix_tokens()) if (id == bos) return false;
      return true;
    });
    ACCEL_FUZZ_CHECK(t.Decode(no_bos, skip) == text, "a control piece (BOS) changed the text");
  }
}

void CheckDecoder(std::string_view input) {
  std::vector<std::string_view> parts = accel::fuzz::Split(input, "\n--accel-fuzz-tokens--\n", 2);
  const std::string json(parts[0]);
  absl::StatusOr<accel::JsonDocument> doc = accel::JsonDocument::Parse("decoder.json", json);
  absl::StatusOr<std::unique_ptr<accel::tok::Decoder>> decoder =
      doc.ok() ? accel::tok::MakeDecoder(*doc, {}) : absl::StatusOr<std::unique_ptr<accel::tok::Decoder>>(doc.status());
  if (!decoder.ok()) {
    const std::string message(decoder.status().message());
    const std::string_view prefix = "decoder.json:";
    ACCEL_FUZZ_CHECK(message.starts_with(prefix), "error without the file name: " + message);
    size_t line = 0, i = prefix.size();
    while (i < message.size() && message[i] >= '0' && message[i] <= '9') line = line * 10 + (message[i++] - '0');
    size_t lines = 1;
    for (char c : json) lines += c == '\n';
    ACCEL_FUZZ_CHECK(line >= 1 && line <= lines, "error located outside the text: " + message);
    return;
  }
  std::vector<std::string> tokens;
  if (parts.size() > 1) {
    for (std::string_view token : accel::fuzz::Split(parts[1], "\n", parts[1].size() + 1)) {
      tokens.push_back(accel::ReplaceInvalidUtf8(token));
    }
  }
  (*decoder)->DecodeChain(tokens);
  std::string text;
  for (const std::string& token : tokens) text += token;
  ACCEL_FUZZ_CHECK(accel::IsValidUtf8(text), "a decoder made valid UTF-8 tokens into invalid UTF-8");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const bool skip = (data[0] & 1) != 0;
  const int mode = (data[0] >> 1) % 3;
  const std::string_view rest(reinterpret_cast<const char*>(data) + 1, size - 1);
  if (mode == 2) {
    CheckDecoder(rest);
    return 0;
  }
  Ids ids(rest.size() / 4);
  for (size_t i = 0; i < ids.size(); ++i) {
    const auto* p = reinterpret_cast<const unsigned char*>(rest.data()) + 4 * i;
    ids[i] = uint32_t{p[0]} | uint32_t{p[1]} << 8 | uint32_t{p[2]} << 16 | uint32_t{p[3]} << 24;
  }
  const Loaded& loaded = Tokenizers();
  if (mode == 0) {
    CheckDecode(*loaded.byte_level, &loaded.byte_level_special, ids, skip);
  } else {
    CheckDecode(*loaded.sentencepiece, nullptr, ids, skip);
  }
  return 0;
}
