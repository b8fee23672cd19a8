#include "tokenizers/tokenizer.h"

#include <filesystem>
#include <fstream>
#include <sstream>
#include <utility>

#include "absl/strings/str_cat.h"
#include "tokenizers/hf_tokenizer.h"
#include "tokenizers/sentencepiece_tokenizer.h"

namespace accel::tok {
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
