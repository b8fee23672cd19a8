#include "tokenizers/sentencepiece_backend.h"

#include <sentencepiece_processor.h>

namespace accel::tok {

struct SentencePieceBackend::Impl {
  sentencepiece::SentencePieceProcessor processor;
};

SentencePieceBackend::SentencePieceBackend(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
SentencePieceBackend::~SentencePieceBackend() = default;

std::unique_ptr<SentencePieceBackend> SentencePieceBackend::Load(std::string_view serialized, std::string* error) {
  auto impl = std::make_unique<Impl>();
  sentencepiece::util::Status status = impl->processor.LoadFromSerializedProto(serialized);
  if (!status.ok()) {
    *error = status.message();
    return nullptr;
  }
  return std::unique_ptr<SentencePieceBackend>(new SentencePieceBackend(std::move(impl)));
}

void SentencePieceBackend::Encode(std::string_view text, std::vector<int>& ids) const {
  std::vector<int> piece_ids;
  // Encoding fails only without a loaded model, which Load rules out.
  (void)impl_->processor.Encode(text, &piece_ids);
  ids.insert(ids.end(), piece_ids.begin(), piece_ids.end());
}

int SentencePieceBackend::piece_count() const { return impl_->processor.GetPieceSize(); }
int SentencePieceBackend::bos_id() const { return impl_->processor.bos_id(); }

}  // namespace accel::tok
