#include "tokenizers/tokenizer.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "tokenizers/hf_tokenizer.h"
#include "tokenizers/sentencepiece_tokenizer.h"

namespace accel::tok {
namespace {

// Length of the valid UTF-8 sequence at text[i], or 0 when the bytes there are not one (RFC 3629).
size_t ValidSequenceLength(std::string_view text, size_t i) {
  auto byte = [&](size_t k) { return i + k < text.size() ? static_cast<unsigned char>(text[i + k]) : 0u; };
  auto continuation = [&](size_t k) { return (byte(k) & 0xC0) == 0x80; };
  unsigned char b = byte(0);
  if (b < 0x80) return 1;
  if (b >= 0xC2 && b <= 0xDF) return continuation(1) ? 2 : 0;
  if (b >= 0xE0 && b <= 0xEF) {
    unsigned char lo = b == 0xE0 ? 0xA0 : 0x80, hi = b == 0xED ? 0x9F : 0xBF;
    return byte(1) >= lo && byte(1) <= hi && continuation(2) ? 3 : 0;
  }
  if (b >= 0xF0 && b <= 0xF4) {
    unsigned char lo = b == 0xF0 ? 0x90 : 0x80, hi = b == 0xF4 ? 0x8F : 0xBF;
    return byte(1) >= lo && byte(1) <= hi && continuation(2) && continuation(3) ? 4 : 0;
  }
  return 0;
}

}  // namespace

std::string ReplaceInvalidUtf8(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    size_t len = ValidSequenceLength(text, i);
    if (len == 0) {
      out += "\xEF\xBF\xBD";
      ++i;
    } else {
      out.append(text.substr(i, len));
      i += len;
    }
  }
  return out;
}

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
