// A SentencePiece model (tokenizer.model of Llama-2, Mistral; Kudo & Richardson 2018) run by the
// sentencepiece library. Encode adds BOS before a sequence when the model defines one, as the
// Llama-2 and Mistral tokenizers do by default, and no EOS.
#ifndef ACCEL_TOKENIZERS_SENTENCEPIECE_TOKENIZER_H_
#define ACCEL_TOKENIZERS_SENTENCEPIECE_TOKENIZER_H_

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "tokenizers/sentencepiece_backend.h"
#include "tokenizers/tokenizer.h"

namespace accel::tok {

class SentencePieceTokenizer : public Tokenizer {
 public:
  // Loads a serialized ModelProto read from `file`. Errors: InvalidArgument "FILE: not a
  // SentencePiece model: MESSAGE" (the library's message).
  static absl::StatusOr<std::unique_ptr<SentencePieceTokenizer>> Parse(const std::string& file,
                                                                      std::string_view serialized);

  void EncodeInto(std::string_view text, std::vector<uint32_t>& out) const override;
  const std::vector<uint32_t>& prefix_tokens() const override { return prefix_; }
  const std::vector<uint32_t>& suffix_tokens() const override { return suffix_; }
  uint32_t id_limit() const override { return id_limit_; }
  // SentencePiece adds a dummy prefix "▁" at the start of every text it encodes, so cutting a
  // document would add one at each cut.
  bool SplitsAtLineStarts() const override { return false; }
  std::string Describe() const override;

 private:
  explicit SentencePieceTokenizer(std::unique_ptr<SentencePieceBackend> backend) : backend_(std::move(backend)) {}
  std::unique_ptr<SentencePieceBackend> backend_;
  std::vector<uint32_t> prefix_;
  std::vector<uint32_t> suffix_;
  uint32_t id_limit_ = 0;
};

}  // namespace accel::tok

#endif  // ACCEL_TOKENIZERS_SENTENCEPIECE_TOKENIZER_H_
