#include "tokenizers/tokenizer.h"

#include <filesystem>
#include <fstream>
#include <sstream>
#include <utility>

#include "absl/strings/str_cat.h"
#include "tokenizers/hf_tokenizer.h"
#include "tokenizers/sentencepiece_tokenizer.h"

namespace accel::tok {
namespace {

// The UTF-8 sequence at text[i] (RFC 3629): {length, true} for a whole character; {n, false} for
// bytes that are not one, n being the length of its maximal subpart (Unicode 15 §3.9, U+FFFD
// substitution of maximal subparts: a lead byte and the continuation bytes that fit it), at least 1.
std::pair<size_t, bool> SequenceAt(std::string_view text, size_t i) {
  auto byte = [&](size_t k) { return i + k < text.size() ? static_cast<unsigned char>(text[i + k]) : 0u; };
  unsigned char b = byte(0);
  if (b < 0x80) return {1, true};
  size_t need = 0;
  unsigned char lo = 0x80, hi = 0xBF;  // the range of the first continuation byte
  if (b >= 0xC2 && b <= 0xDF) {
    need = 2;
  } else if (b >= 0xE0 && b <= 0xEF) {
    need = 3;
    lo = b == 0xE0 ? 0xA0 : 0x80;
    hi = b == 0xED ? 0x9F : 0xBF;
  } else if (b >= 0xF0 && b <= 0xF4) {
    need = 4;
    lo = b == 0xF0 ? 0x90 : 0x80;
    hi = b == 0xF4 ? 0x8F : 0xBF;
  } else {
    return {1, false};
  }
  size_t n = 1;
  if (byte(1) >= lo && byte(1) <= hi) {
    n = 2;
    while (n < need && (byte(n) & 0xC0) == 0x80) ++n;
  }
  return {n, n == need};
}

// `text` with invalid UTF-8 replaced by U+FFFD: one per byte, or one per maximal subpart.
std::string Replace(std::string_view text, bool per_subpart) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    auto [length, whole] = SequenceAt(text, i);
    if (whole) {
      out.append(text.substr(i, length));
    } else {
      out += "\xEF\xBF\xBD";
      if (!per_subpart) length = 1;
    }
    i += length;
  }
  return out;
}

}  // namespace

std::string ReplaceInvalidUtf8(std::string_view text) { return Replace(text, false); }

std::string DecodeUtf8Lossy(std::string_view text) { return Replace(text, true); }

absl::StatusOr<std::unique_ptr<Tokenizer>> Tokenizer::Load(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) {
    return absl::NotFoundError(absl::StrCat("tokenizer file does not exist: ", path));
  }
  std::ifstream in(path, std::ios::binary);
  std::ostringstream buffer;
  buffer << in.rdbuf();
  if (!in) return absl::InternalError(absl::StrCat("cannot read tokenizer file: ", path));
  std::string text = std::move(buffer).str();
  size_t first = text.find_first_not_of(" \t\r\n");
  const bool json = std::filesystem::path(path).extension() == ".json" ||
                    (first != std::string::npos && (text[first] == '{' || text[first] == '['));
  if (json) {
    absl::StatusOr<std::unique_ptr<HfTokenizer>> hf = HfTokenizer::Parse(path, std::move(text));
    if (!hf.ok()) return hf.status();
    return std::unique_ptr<Tokenizer>(std::move(*hf));
  }
  absl::StatusOr<std::unique_ptr<SentencePieceTokenizer>> sp = SentencePieceTokenizer::Parse(path, text);
  if (!sp.ok()) return sp.status();
  return std::unique_ptr<Tokenizer>(std::move(*sp));
}

std::vector<uint32_t> Tokenizer::Encode(std::string_view text, bool add_special_tokens) const {
  std::vector<uint32_t> ids;
  if (add_special_tokens) ids = prefix_tokens();
  EncodeInto(text, ids);
  if (add_special_tokens) ids.insert(ids.end(), suffix_tokens().begin(), suffix_tokens().end());
  return ids;
}

}  // namespace accel::tok
