#include "data/corpus.h"

#include "absl/strings/str_cat.h"
#include "data/byte_tokenizer.h"
#include "data/text_source.h"
#include "data/token_file.h"

namespace accel::exec {

absl::StatusOr<std::vector<uint32_t>> LoadCorpus(const std::string& path, CorpusFormat format, int64_t vocab_size) {
  if (format == CorpusFormat::kText) {
    if (vocab_size < ByteTokenizer::kVocabSize) {
      return absl::InvalidArgumentError(absl::StrCat("byte-level text needs vocab_size >= 256, got ", vocab_size));
    }
    absl::StatusOr<std::string> text = ReadTextCorpus(path);
    if (!text.ok()) return text.status();
    return ByteTokenizer::Encode(*text);
  }
  absl::StatusOr<std::vector<uint32_t>> tokens =
      ReadTokenFile(path, format == CorpusFormat::kTokensU16 ? TokenWidth::kUint16 : TokenWidth::kUint32);
  if (!tokens.ok()) return tokens.status();
  for (size_t i = 0; i < tokens->size(); ++i) {
    if (static_cast<int64_t>((*tokens)[i]) >= vocab_size) {
      return absl::InvalidArgumentError(absl::StrCat(path, ": token ", (*tokens)[i], " at index ", i,
                                                     " is outside the vocabulary of ", vocab_size));
    }
  }
  return tokens;
}

}  // namespace accel::exec
