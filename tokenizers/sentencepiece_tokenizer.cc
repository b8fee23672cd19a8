#include "tokenizers/sentencepiece_tokenizer.h"

#include "absl/strings/str_cat.h"

namespace accel::tok {

absl::StatusOr<std::unique_ptr<SentencePieceTokenizer>> SentencePieceTokenizer::Parse(const std::string& file,
                                                                                     std::string_view serialized) {
  std::string error;
  std::unique_ptr<SentencePieceBackend> backend = SentencePieceBackend::Load(serialized, &error);
  if (backend == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(file, ": not a SentencePiece model: ", error));
  }
  int pieces = backend->piece_count();
  if (pieces <= 0) return absl::InvalidArgumentError(absl::StrCat(file, ": not a SentencePiece model: no pieces"));
  std::unique_ptr<SentencePieceTokenizer> tokenizer(new SentencePieceTokenizer(std::move(backend)));
  tokenizer->id_limit_ = static_cast<uint32_t>(pieces);
  if (int bos = tokenizer->backend_->bos_id(); bos >= 0) tokenizer->prefix_.push_back(static_cast<uint32_t>(bos));
  return tokenizer;
}

void SentencePieceTokenizer::EncodeInto(std::string_view text, std::vector<uint32_t>& out) const {
  std::vector<int> ids;
  backend_->Encode(text, ids);
  out.insert(out.end(), ids.begin(), ids.end());
}

std::string SentencePieceTokenizer::Describe() const {
  return absl::StrCat("SentencePiece model (", id_limit_, " ids)");
}

}  // namespace accel::tok
