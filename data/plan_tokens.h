// The token stream a worker trains on, from the plan's data section alone: a token file as is,
// or text encoded with the plan's tokenizer (ir::Data.tokenizer: bytes, a Hugging Face
// tokenizer.json or a SentencePiece model). Torch-free; the launcher's pre-launch check loads the
// tokenizer with the same function the workers use.
//
// Cost and determinism: every rank encodes the whole text in memory when it starts (no cache
// file: nothing to invalidate, nothing shared between nodes). The ids depend only on the files
// and the tokenizer, not on the thread count or the rank, so every rank and every resumed run
// windows the same stream and a checkpoint's data position means the same windows.
#ifndef ACCEL_DATA_PLAN_TOKENS_H_
#define ACCEL_DATA_PLAN_TOKENS_H_

#include <cstdint>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "ir/plan.pb.h"
#include "tokenizers/tokenizer.h"

namespace accel::exec {

// The tokenizer file of a "huggingface" or "sentencepiece" plan, loaded; nullptr for "bytes"
// (or ""). Errors: those of tok::Tokenizer::Load; InvalidArgument "PATH: planned as KIND but
// the file is DESCRIPTION" when the file's content is of the other kind, and "tokenizer 'X' is
// unknown (expected bytes, huggingface or sentencepiece)".
absl::StatusOr<std::unique_ptr<tok::Tokenizer>> LoadPlanTokenizer(const ir::Data& data);

// The ids of the plan's training data: a token file (format "tokens", token_dtype wide) or the
// text of data.path() encoded with the plan's tokenizer on `threads` threads, as
// tok::EncodeTextPath does for `accel tokenize` (BOS/EOS around each file). Errors: those of
// ReadTokenFile, ReadTextCorpus, LoadPlanTokenizer and EncodeTextPath; InvalidArgument "PATH:
// token T at position I is outside the model's vocabulary of V".
absl::StatusOr<std::vector<uint32_t>> LoadPlanTokens(const ir::Data& data, int64_t vocab_size, int threads);

}  // namespace accel::exec

#endif  // ACCEL_DATA_PLAN_TOKENS_H_
