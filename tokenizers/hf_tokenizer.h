// A Hugging Face tokenizer.json with a BPE model: added tokens, normalizer, pre-tokenizer, BPE and
// post-processor, applied in that order as tokenizers' TokenizerImpl::encode does; decoding maps
// ids to their tokens (added tokens first, then the vocabulary) and runs the "decoder", as
// TokenizerImpl::decode does.
#ifndef ACCEL_TOKENIZERS_HF_TOKENIZER_H_
#define ACCEL_TOKENIZERS_HF_TOKENIZER_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "tokenizers/added_tokens.h"
#include "tokenizers/bpe_model.h"
#include "tokenizers/decoder.h"
#include "tokenizers/normalizer.h"
#include "tokenizers/post_processor.h"
#include "tokenizers/pre_tokenizer.h"
#include "tokenizers/tokenizer.h"

namespace accel::tok {

class HfTokenizer : public Tokenizer {
 public:
  // Parses tokenizer.json text read from `file` (the name used in messages). Errors:
  // InvalidArgument "FILE:LINE:COL: FIELD: MESSAGE" (see the readers of each part).
  static absl::StatusOr<std::unique_ptr<HfTokenizer>> Parse(std::string file, std::string text);

  void EncodeInto(std::string_view text, std::vector<uint32_t>& out) const override;
  std::string DecodeIds(const std::vector<uint32_t>& ids, bool skip_special_tokens) const override;
  const std::vector<uint32_t>& prefix_tokens() const override { return wrap_.prefix; }
  const std::vector<uint32_t>& suffix_tokens() const override { return wrap_.suffix; }
  uint32_t id_limit() const override { return id_limit_; }
  bool SplitsAtLineStarts() const override;
  std::string Describe() const override;

 private:
  HfTokenizer(BpeModel model, AddedTokenSplitter added);
  void EncodeSection(std::string_view text, WordCache& cache, std::vector<uint32_t>& out) const;

  BpeModel model_;
  AddedTokenSplitter added_;
  std::unique_ptr<Normalizer> normalizer_;
  std::unique_ptr<PreTokenizer> pre_tokenizer_;
  std::unique_ptr<Decoder> decoder_;  // nullptr: no "decoder" in the file
  SpecialWrap wrap_;
  uint32_t id_limit_ = 0;
  uint64_t instance_ = 0;  // distinct for every HfTokenizer made, to own a thread's word cache
};

}  // namespace accel::tok

#endif  // ACCEL_TOKENIZERS_HF_TOKENIZER_H_
